"""The workspace's conversation across turns, and compacting it (SPEC §4 level 4, the page's button).

A turn starts from the earlier questions and answers of its workspace. Compacting the workspace
writes the transcript, then stores a `[Context compressed]` summary as a message row with no run
(so it is never read as an exchange itself); its `name` records how many earlier exchange
messages it covers. Later turns start from that summary, then the exchanges after it.
"""

from __future__ import annotations

from typing import Any

from app.agent.context import summary
from app.agent.context.outputs import OutputStore
from app.agent.store import Message, Session, add_summary_message, latest_summary_message

SUMMARY_NAME = "context_summary"


def latest_summary(session: Session, workspace_id: str) -> tuple[Message | None, int]:
    """The workspace's newest summary and how many exchange messages it covers (its name's count)."""
    row = latest_summary_message(session, workspace_id, f"{SUMMARY_NAME}:")
    if row is None or row.name is None:  # (the query matched on the name, so a row has one)
        return None, 0
    return row, int(row.name.split(":", 1)[1])


def with_workspace_summary(
    session: Session, workspace_id: str, exchanges: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The earlier exchanges as a turn sees them: the latest summary, then what came after it."""
    row, covered = latest_summary(session, workspace_id)
    if row is None:
        return exchanges
    return [
        {"role": "user", "content": row.content or ""},
        {"role": "assistant", "content": summary.ACK},
        *exchanges[covered:],
    ]


def compact_workspace(
    session: Session, store: OutputStore, workspace_id: str, exchanges: list[dict[str, Any]], keep: int = 10
) -> dict[str, Any]:
    """Summarise all but the newest `keep` exchange messages (transcript written first). The
    summary is extractive: immediate and deterministic, so a click never waits on a model."""
    row, covered = latest_summary(session, workspace_id)
    current = with_workspace_summary(session, workspace_id, exchanges)
    fresh = exchanges[covered:]
    cut = len(fresh) - keep
    while 0 < cut < len(fresh) and fresh[cut]["role"] != "user":  # keep question-answer pairs together
        cut -= 1
    if cut <= 0:
        return {"compacted": 0, "reason": "nothing to compact"}
    transcript_id = store.save_transcript(current)
    early = current[: len(current) - len(fresh) + cut]
    text = summary.summary_message(
        summary.extractive_summary(early), summary.key_lines(early), len(early), transcript_id
    )["content"]
    add_summary_message(session, workspace_id, text, name=f"{SUMMARY_NAME}:{covered + cut}")
    return {"compacted": len(early), "transcript": transcript_id, "kept": len(fresh) - cut}
