"""SQLAlchemy models: the state that must survive compaction, restarts and crashes.

Identifiers are short random hex strings (safe in URLs and file names). JSON columns hold
lists and dicts that are read whole and never queried into.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, String, Text
from sqlalchemy import false as sa_false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def new_id() -> str:
    return secrets.token_hex(8)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class User(Base):
    """Someone who signs in (multi-user mode). A local single-user setup needs none."""

    __tablename__ = "users"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(320), unique=True)  # stored lower-cased: the login name
    name: Mapped[str] = mapped_column(String(200), default="")
    password_hash: Mapped[str] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AuthToken(Base):
    """A browser session or an API token. Only a hash of the secret is stored."""

    __tablename__ = "auth_tokens"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(10))  # "session" | "api"
    name: Mapped[str] = mapped_column(String(200), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)


class Workspace(Base):
    __tablename__ = "workspaces"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    # The owning user's id; None for the local single-user mode (SPEC §7: no one else can read it).
    owner: Mapped[str | None] = mapped_column(String(200), default=None, index=True)
    rules: Mapped[str] = mapped_column(Text, default="")  # the workspace rules file (like AGENTS.md)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    datasets: Mapped[list["Dataset"]] = relationship(back_populates="workspace", order_by="Dataset.created_at")
    runs: Mapped[list["Run"]] = relationship(back_populates="workspace", order_by="Run.created_at")


class Dataset(Base):
    """One version of an uploaded table. Cleaning makes a new version; the original file stays."""

    __tablename__ = "datasets"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))  # how tools and the model refer to it
    file_name: Mapped[str] = mapped_column(String(500))
    format: Mapped[str] = mapped_column(String(20))
    sheet: Mapped[str | None] = mapped_column(String(200), default=None)
    # Store keys (app/storage: `workspaces/<id>/files/<id>/<name>`), never a path of one machine
    original_path: Mapped[str] = mapped_column(Text)
    working_path: Mapped[str] = mapped_column(Text)  # Parquet
    version: Mapped[int] = mapped_column(Integer, default=1)
    parent_id: Mapped[str | None] = mapped_column(String(32), default=None)
    step: Mapped[str | None] = mapped_column(Text, default=None)  # what made this version
    active: Mapped[bool] = mapped_column(default=True)
    rows: Mapped[int] = mapped_column(Integer, default=0)
    info: Mapped[dict[str, Any]] = mapped_column(default=dict)  # `verity inspect --json` shape
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    workspace: Mapped[Workspace] = relationship(back_populates="datasets")


class Run(Base):
    """One turn: a user message and everything the agent did to answer it."""

    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    question: Mapped[str] = mapped_column(Text)
    language: Mapped[str] = mapped_column(String(8), default="en")
    status: Mapped[str] = mapped_column(String(20), default="queued")  # queued|running|waiting|done|failed|interrupted
    intent: Mapped[str | None] = mapped_column(String(20), default=None)
    answer: Mapped[str | None] = mapped_column(Text, default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    model_kind: Mapped[str] = mapped_column(String(40), default="builtin")
    model_name: Mapped[str] = mapped_column(String(200), default="builtin")
    state: Mapped[dict[str, Any]] = mapped_column(default=dict)  # budgets, rounds: what a resume needs
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # Worker processes (app/worker.py): who runs it, its last sign of life, and a stop request from
    # the web process. Separate columns, so no process overwrites what another one writes.
    worker: Mapped[str | None] = mapped_column(String(200), default=None)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    stop_requested: Mapped[bool] = mapped_column(default=False, server_default=sa_false())
    workspace: Mapped[Workspace] = relationship(back_populates="runs")


class Message(Base):
    """The conversation in OpenAI chat format, in order, per workspace."""

    __tablename__ = "messages"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"), index=True, default=None)
    role: Mapped[str] = mapped_column(String(20))
    content: Mapped[str | None] = mapped_column(Text, default=None)
    tool_calls: Mapped[list[Any] | None] = mapped_column(JSON(none_as_null=True), default=None)
    tool_call_id: Mapped[str | None] = mapped_column(String(100), default=None)
    name: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ToolCall(Base):
    __tablename__ = "tool_calls"
    # The model's tool_call id is unique only within a run (providers reuse "call_0").
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    tool: Mapped[str] = mapped_column(String(100))
    arguments: Mapped[dict[str, Any]] = mapped_column(default=dict)
    ok: Mapped[bool] = mapped_column(default=True)
    duration_ms: Mapped[float] = mapped_column(Float, default=0.0)
    result_text: Mapped[str] = mapped_column(Text, default="")
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), default=None)
    figures: Mapped[list[Any]] = mapped_column(default=list)  # [{"path": a store key, "caption"}]
    interpretation: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Event(Base):
    """Progress events streamed to the page (SSE); the integer id is the stream cursor."""

    __tablename__ = "events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Evidence(Base):
    __tablename__ = "evidence"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    claim: Mapped[str] = mapped_column(Text)
    method: Mapped[str] = mapped_column(Text, default="")
    result_summary: Mapped[str] = mapped_column(Text, default="")
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    sample_size: Mapped[int | None] = mapped_column(Integer, default=None)
    confidence: Mapped[str] = mapped_column(String(10), default="medium")
    limitations: Mapped[list[Any]] = mapped_column(default=list)
    tool_call_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Task(Base):
    __tablename__ = "tasks"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"), index=True, default=None)
    subject: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text, default="")
    expected_output: Mapped[str] = mapped_column(Text, default="")
    required_capability: Mapped[str] = mapped_column(Text, default="")
    evidence_requirements: Mapped[str] = mapped_column(Text, default="")
    blocked_by: Mapped[list[Any]] = mapped_column(default=list)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    completed_by: Mapped[str | None] = mapped_column(String(20), default=None)  # "evidence" | "model"
    evidence_id: Mapped[str | None] = mapped_column(String(32), default=None)
    result_summary: Mapped[str | None] = mapped_column(Text, default=None)
    confidence: Mapped[str | None] = mapped_column(String(10), default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class Question(Base):
    """A clarification question; the run waits until it is answered."""

    __tablename__ = "questions"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    kind: Mapped[str] = mapped_column(String(10), default="single")  # single|multi|text
    question: Mapped[str] = mapped_column(Text)
    options: Mapped[list[Any]] = mapped_column(default=list)  # [{"label", "description"}]
    reason: Mapped[str] = mapped_column(Text, default="")
    topic: Mapped[str | None] = mapped_column(String(100), default=None)  # e.g. "metric": never ask twice
    answer: Mapped[Any | None] = mapped_column(JSON(none_as_null=True), default=None)
    tool_call_id: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    answered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)


class Report(Base):
    __tablename__ = "reports"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    content: Mapped[dict[str, Any]] = mapped_column(default=dict)  # report.json
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class KnowledgeEntry(Base):
    """Reference material of a workspace (a note, or the text of an uploaded document): retrieved
    by relevance each turn and injected at the knowledge tier (reference only, SPEC §6)."""

    __tablename__ = "knowledge"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    title: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(500), default="note")  # "note" or the uploaded file's name
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReportShare(Base):
    """A read-only link to one run's report for people without an account (SPEC §7: sharing
    outside the workspace is confirmed first). Only a hash of the link's secret is kept."""

    __tablename__ = "report_shares"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id"), index=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    views: Mapped[int] = mapped_column(Integer, default=0)


class AuthAttempt(Base):
    """A sign-in being tried or failed, or an account made, kept for the throttle's window
    (app/web/throttle.py). In the database, not in a process: every server behind a load balancer
    counts the same attempts (issue 26 F7)."""

    __tablename__ = "auth_attempts"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(10))  # "signin" | "signup"
    account: Mapped[str] = mapped_column(String(320), default="", index=True)  # the lower-cased e-mail
    client: Mapped[str] = mapped_column(String(64), index=True)  # the address (an IPv6 address's /64)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class Lease(Base):
    """Work one node has taken on, for a while (app/db/nodes.py): a background read of a big upload, a
    number check, a run executed by a server's threads. Claimed with a conditional write that only
    one node wins, renewed while the work goes on, and free for another node once `expires_at` has
    passed (its holder died). `holder` is the holder's boot id, never a process id: every container's
    process may be PID 1 (issue 26 F6)."""

    __tablename__ = "leases"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)  # "load:<dataset>", "check:<run>", ...
    holder: Mapped[str] = mapped_column(String(64), index=True)  # the boot id of the node holding it
    holder_name: Mapped[str] = mapped_column(String(300), default="")  # host:pid, for people reading it
    acquired_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    detail: Mapped[str] = mapped_column(Text, default="")  # what it is about (an upload's file name)


class StoreMarker(Base):
    """Which object store this database was made with (app/storage/marker.py): one row, written with the
    marker object at the first start; every later start of a node compares its store's marker with it,
    so a node whose store is another one (a node's own folder where a shared one was meant, another
    bucket) refuses to start instead of writing files no other node can read (issue 26 point 5)."""

    __tablename__ = "store_marker"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # always 1: one store per database
    store_id: Mapped[str] = mapped_column(String(64))  # the random id the marker object holds too
    store_kind: Mapped[str] = mapped_column(String(20))  # "local" | "s3"
    store_place: Mapped[str] = mapped_column(Text, default="")  # where it was (a folder, s3://bucket/prefix)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PseudonymBookRow(Base):
    """A workspace's pseudonym book (app/agent/policy/privacy.py; its entries are `Pseudonym` rows): the
    key of its hashed pseudonyms, the personal kinds the workspace holds, and the row every writer of
    the book locks first (app/db/pseudonyms.py), so runs on any node number new values one at a time."""

    __tablename__ = "pseudonym_books"
    workspace_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    hash_key: Mapped[str] = mapped_column(String(64))
    kinds: Mapped[list[Any]] = mapped_column(default=list)
    version: Mapped[int] = mapped_column(Integer, default=0)  # raised by every write (taking the lock)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Pseudonym(Base):
    """One entry of a workspace's pseudonym book: the pseudonym the model reads, the real value it stands for."""

    __tablename__ = "pseudonyms"
    workspace_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("pseudonym_books.workspace_id", ondelete="CASCADE"), primary_key=True
    )
    pseudonym: Mapped[str] = mapped_column(Text, primary_key=True)
    real_value: Mapped[str] = mapped_column(Text)
