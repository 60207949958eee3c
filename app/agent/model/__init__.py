"""The model room: the ChatModel interface every model implements (interface.py), the
OpenAI-compatible client (openai_compatible.py), what the harness does with an unusable reply
(recovery.py), a valid tool-call protocol for the next request (protocol.py), and token counts
(tokens.py)."""

from app.agent.model.interface import ChatModel, ModelError, ModelReply, ToolCallRequest, parse_arguments
from app.agent.model.openai_compatible import OpenAICompatibleModel

__all__ = ["ChatModel", "ModelError", "ModelReply", "OpenAICompatibleModel", "ToolCallRequest", "parse_arguments"]
