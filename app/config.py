"""One Settings class: every knob Verity has, with its default and what it means.

Limits are settings (as in datasette): change them with `VERITY_*` environment variables or a
`.env` file. `tests/test_config.py` fails when a field lacks a description.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VERITY_", env_file=".env", extra="ignore")

    # --- model -----------------------------------------------------------------------------
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1."
    )
    llm_api_key: str | None = Field(
        None, description="Key for the endpoint; OPENAI_API_KEY is accepted as a fallback."
    )
    llm_model: str | None = Field(
        None,
        description="Model name; 'builtin' forces the built-in analyst. Defaults to 'builtin' "
        "when neither a key nor a base URL is set.",
    )
    llm_timeout_s: float = Field(120.0, description="Timeout of one model request, in seconds.")
    llm_max_retries: int = Field(
        4, description="Retries of a model request on timeouts, 429 and 5xx, with backoff."
    )
    llm_temperature: float | None = Field(
        None, description="Sampling temperature; unset means the provider's default is used."
    )
    llm_max_output_tokens: int | None = Field(
        None, description="max_tokens sent with each request; unset sends nothing."
    )

    # --- storage ---------------------------------------------------------------------------
    data_dir: Path = Field(
        Path("data/runtime"),
        description="Where uploads, working copies, tool outputs, transcripts, figures and "
        "reports live.",
    )
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; defaults to SQLite file verity.db in data_dir."
    )
    lang: Literal["zh", "en"] = Field(
        "en", description="Default language of answers and reports (the UI follows the browser)."
    )

    # --- web -------------------------------------------------------------------------------
    host: str = Field("127.0.0.1", description="Address `verity serve` binds to.")
    port: int = Field(8000, description="Port `verity serve` listens on.")
    run_workers: int = Field(
        2, description="Background threads that execute runs in the server process."
    )
    sse_poll_interval_s: float = Field(
        0.25, description="How often the event stream checks for new progress events."
    )
    sse_heartbeat_s: float = Field(
        10.0, description="Seconds between keep-alive comments on an idle event stream."
    )

    # --- ingestion limits ------------------------------------------------------------------
    max_upload_mb: int = Field(200, description="Largest accepted upload, in megabytes.")
    max_rows: int = Field(5_000_000, description="Most rows read from one sheet or CSV.")
    max_columns: int = Field(2_000, description="Most columns read from one sheet or CSV.")
    preview_rows: int = Field(20, description="Rows shown in previews and `inspect`.")

    # --- agent budgets (SPEC §2, §5) -------------------------------------------------------
    context_threshold_tokens: int = Field(
        100_000, description="Context token threshold; intents use a ratio of it."
    )
    tool_budget_interactive: int = Field(
        50, description="Tool-call budget per turn for chat/consult/followup/data_prep."
    )
    tool_budget_analysis: int = Field(130, description="Tool-call budget per analysis turn.")
    tool_budget_deep: int = Field(200, description="Tool-call budget per deep turn.")
    max_rounds: int = Field(
        300, description="Hard stop: model rounds per turn before the turn is wrapped up."
    )
    turn_wall_time_s: float = Field(
        1800.0, description="Wall-time cap of one turn, in seconds."
    )

    # --- context cascade (SPEC §4) ---------------------------------------------------------
    tool_result_truncate_chars: int = Field(
        3_000, description="Tool results longer than this are saved to disk and truncated."
    )
    tool_result_persist_chars: int = Field(
        15_000, description="Tool results longer than this are replaced by a short preview."
    )
    tool_result_preview_chars: int = Field(
        2_000, description="Size of the preview left in context for persisted tool output."
    )

    @model_validator(mode="after")
    def _fill_defaults(self) -> "Settings":
        if self.llm_api_key is None and os.environ.get("OPENAI_API_KEY"):
            self.llm_api_key = os.environ["OPENAI_API_KEY"]
        if not self.llm_model:
            self.llm_model = "builtin" if not (self.llm_api_key or self.llm_base_url) else "gpt-4o-mini"
        return self

    # --- derived paths ---------------------------------------------------------------------
    @property
    def use_builtin(self) -> bool:
        return self.llm_model == "builtin"

    @property
    def sqlalchemy_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'verity.db').resolve()}"

    def workspace_dir(self, workspace_id: str) -> Path:
        return self.data_dir / "workspaces" / workspace_id


@lru_cache
def get_settings() -> Settings:
    return Settings()
