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

from app.paths import REPO_ROOT  # noqa: F401 - re-exported: app.config.REPO_ROOT


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VERITY_", env_file=".env", extra="ignore")

    # --- model -----------------------------------------------------------------------------
    llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1.")
    llm_api_key: str | None = Field(None, description="Key for the endpoint; OPENAI_API_KEY is accepted as a fallback.")
    llm_model: str | None = Field(
        None,
        description="Model name; 'builtin' forces the built-in analyst. Defaults to 'builtin' "
        "when neither a key nor a base URL is set.",
    )
    llm_timeout_s: float = Field(120.0, description="Timeout of one model request, in seconds.")
    llm_max_retries: int = Field(4, description="Retries of a model request on timeouts, 429 and 5xx, with backoff.")
    llm_temperature: float | None = Field(
        None, description="Sampling temperature; unset means the provider's default is used."
    )
    llm_max_output_tokens: int | None = Field(
        None, description="max_tokens sent with each request; unset sends nothing."
    )
    llm_length_retry_tokens: int = Field(
        4096,
        description="Base output budget of the finish_reason=length ladder when "
        "llm_max_output_tokens is unset: an empty reply cut off by length is asked again with 2x "
        "and then 4x the base (of llm_max_output_tokens when set).",
    )
    llm_stream: bool = Field(
        False,
        description="Stream model replies (stream=True) so the final answer appears on the "
        "page while it is written; needs a provider that supports streaming.",
    )

    # --- storage ---------------------------------------------------------------------------
    data_dir: Path = Field(
        Path("data/runtime"),
        description="Where uploads, working copies, tool outputs, transcripts, figures and reports live.",
    )
    storage_url: str | None = Field(
        None,
        description="Where every kept file (uploads, working copies, figures, report files, traces' large "
        "payloads) lives for good: unset keeps them in data_dir (one machine); s3://bucket/prefix puts them "
        "in an S3-compatible object store (AWS S3, MinIO, Cloudflare R2, Aliyun OSS) that several app servers "
        "and workers share, each keeping a bounded cache in its own data_dir (cache_max_mb).",
    )
    storage_endpoint_url: str | None = Field(
        None,
        description="The S3 endpoint of a store that is not AWS, e.g. http://minio:9000, "
        "https://<account>.r2.cloudflarestorage.com or https://oss-cn-hangzhou.aliyuncs.com.",
    )
    storage_region: str | None = Field(None, description="The object store's region (AWS S3; others ignore it).")
    storage_access_key_id: str | None = Field(
        None, description="The object store's access key; unset: the usual AWS_* variables, ~/.aws or an instance role."
    )
    storage_secret_access_key: str | None = Field(
        None, description="The secret of storage_access_key_id (keep it in the env file, not in compose files)."
    )
    storage_addressing_style: Literal["auto", "path", "virtual"] = Field(
        "auto",
        description="How bucket names go into requests: path (http://host/bucket/key: MinIO), virtual "
        "(http://bucket.host/key: Aliyun OSS requires it) or auto (path with storage_endpoint_url, else virtual).",
    )
    storage_retries: int = Field(
        4,
        ge=0,
        description="How many times a request to the object store that failed (no answer, a busy store) is "
        "tried again, with a growing pause between tries, before the store counts as unavailable for it.",
    )
    cache_max_mb: float = Field(
        2_048.0,
        description="With storage_url set: the disk space, in MB, this node's cache of the store's files "
        "(in data_dir/workspaces) may use; past it the least recently used files the store holds are removed "
        "and fetched again when next needed. 0: no limit. Ignored without storage_url (data_dir is the store).",
    )
    database_url: str | None = Field(None, description="SQLAlchemy URL; defaults to SQLite file verity.db in data_dir.")
    sqlite_synchronous: Literal["NORMAL", "FULL"] = Field(
        "NORMAL",
        description="SQLite durability in WAL mode: NORMAL survives a crash of the server "
        "process without an fsync per commit; FULL also survives a power loss, at several ms per commit.",
    )
    sqlite_busy_timeout_s: float = Field(
        30.0,
        description="How long a SQLite write waits for the database's one write lock (busy timeout), "
        "in seconds, before the commit is retried (db_retry_s).",
    )
    db_pool_size: int = Field(
        0,
        description="Database connections each process keeps; 0 sizes the pool to the threads that may "
        "hold one at once (the web server's 40 request threads + run_workers + 4), so requests never wait "
        "for a connection. PostgreSQL's max_connections must cover every process's pool.",
    )
    db_processes: int = Field(
        3,
        description="PostgreSQL only: how many Verity processes share the server (the app and its "
        "`verity worker`s). Each process keeps at most (max_connections - reserved) / db_processes "
        "connections, so 50 users wait briefly for a connection instead of being refused with "
        "'too many clients'.",
    )
    db_retry_s: float = Field(
        30.0,
        description="How long a commit that failed because SQLite was busy or the database connection "
        "was lost is retried (rolled back and written again on a fresh connection), in seconds.",
    )
    lang: Literal["zh", "en"] = Field(
        "en", description="Default language of answers and reports (the UI follows the browser)."
    )
    log_max_mb: float = Field(
        10.0,
        description="Size, in megabytes, at which data_dir/verity.log (the log with tracebacks that "
        "`verity worker` and `verity analyze` write) is renamed verity.log.1 and a fresh one begun; "
        "0: never rotated (it grows without bound).",
    )
    log_backups: int = Field(
        5,
        description="Rotated logs kept beside verity.log (verity.log.1 is the newest); the oldest is "
        "deleted when another is rotated. 0: never rotated.",
    )

    # --- web -------------------------------------------------------------------------------
    host: str = Field("127.0.0.1", description="Address `verity serve` binds to.")
    port: int = Field(8000, description="Port `verity serve` listens on.")
    public_url: str | None = Field(
        None,
        description="The address other people use to reach this Verity, e.g. https://verity.example.com "
        "(behind a proxy, or http://192.168.1.20:8000 on a local network); share links are built from it. "
        "Unset: from the address the browser used, and the share page warns when that only works on this computer.",
    )
    auth: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Sign-in (multi-user mode, SPEC §7): auto asks for it when the server is bound "
        "to an address other than loopback; on always asks; off never does (one trusted user). Set `on` "
        "when running uvicorn yourself behind a proxy.",
    )
    signup: Literal["open", "closed"] = Field(
        "open",
        description="Who may create an account on the sign-up page: anyone (open), or only the "
        "first user (closed; later accounts are added with `verity users add`).",
    )
    session_days: int = Field(30, description="Days a browser stays signed in.")
    # --- sign-in and sign-up throttles (app/web/throttle.py; counted in the database, so every
    # server process behind a load balancer counts the same attempts) ------------------------
    login_max_failures: int = Field(
        5,
        description="Failed sign-ins for one account from one client address within login_window_s after "
        "which further tries of that account from there wait (429). 0: no such limit.",
    )
    login_max_failures_account: int = Field(
        20,
        description="Failed sign-ins for one account from all addresses together within login_window_s "
        "after which the account counts as under attack: an address that has failed on it waits, one that "
        "has not (its owner at home) may still sign in. The account is never locked for everyone. 0: off.",
    )
    login_max_failures_client: int = Field(
        20,
        description="Failed sign-ins from one client address for any accounts within login_window_s after "
        "which that address waits (trying many accounts). 0: no such limit.",
    )
    login_window_s: float = Field(900.0, description="The window of the sign-in failure counts, in seconds.")
    signup_max_per_client: int = Field(
        10,
        description="Accounts that may be made on the sign-up page from one client address within "
        "signup_window_s (a sign-up refused because the e-mail address is taken counts too); more wait "
        "(429). An IPv6 address counts as its /64 network. 0: no limit.",
    )
    signup_window_s: float = Field(3600.0, description="The window of the sign-up count, in seconds.")
    # --- trusted proxies: which peers may say who the client is and whether it came over https -
    proxy_headers: bool = Field(
        False,
        description="Verity runs behind a reverse proxy: take the client address from X-Forwarded-For "
        "and the scheme (https: Secure session cookies) from X-Forwarded-Proto, but only from the addresses "
        "in forwarded_allow_ips. Off: the headers are ignored, so no client can pick its own address. "
        "Passed to uvicorn by `verity serve`.",
    )
    forwarded_allow_ips: str = Field(
        "127.0.0.1",
        description="The trusted proxies: comma-separated addresses or networks (e.g. 10.0.0.0/8; * for "
        "any peer) whose X-Forwarded-For and X-Forwarded-Proto headers are believed when proxy_headers is on.",
    )

    # --- slow clients (app/web/slow_clients.py; `verity serve` installs it in uvicorn) ----------
    http_header_timeout_s: float = Field(
        15.0,
        description="Time a connection has to send a request's line and headers, from when it opens or "
        "from the first byte of its next request; past it the connection is closed (408). Slow senders "
        "(a header line every few seconds) no longer hold connections forever. 0: no limit.",
    )
    http_body_timeout_s: float = Field(
        30.0,
        description="Longest pause while a request body is being sent, in seconds; past it the "
        "connection is closed. 0: no limit.",
    )
    http_body_min_bytes_per_s: float = Field(
        1024.0,
        description="Once a body has been arriving for longer than http_body_timeout_s, it must have come "
        "at this average rate (bytes per second) or the connection is closed: a body trickled a byte at a "
        "time cannot hold a connection for hours. 0: no minimum.",
    )
    run_workers: int = Field(
        2,
        description="Threads that execute runs at once, in the server process (run_executor=threads) "
        "or in each `verity worker` process.",
    )
    max_active_runs_per_user: int = Field(
        3,
        description="Most runs one signed-in user may have queued or running at once (multi-user mode; "
        "0: no limit). More are refused with 429 too_many_runs until one finishes.",
    )
    run_executor: Literal["threads", "worker", "dramatiq"] = Field(
        "threads",
        description="Where runs execute: threads of the web server (one machine, no broker); separate "
        "`verity worker` processes that take queued runs from the database (worker); or `verity worker` "
        "processes fed by a job queue on a broker (dramatiq, broker_url; app/jobs.py): a run whose worker "
        "dies goes on at once on another from its recorded steps, failures of the machine are retried "
        "with backoff, a run that fails run_max_attempts times is set aside, and questions have their "
        "own queue beside full reports.",
    )
    broker_url: str = Field(
        "amqp://guest:guest@127.0.0.1:5672/",
        description="The job queue's broker (run_executor=dramatiq): RabbitMQ (amqp://…, measured to hand "
        "a dead worker's run over at once: bench/queue_takeover.py) or Redis (redis://…: works, but a dead "
        "worker's run was not handed over within 150 s in the same measurement).",
    )
    job_queue_prefix: str = Field(
        "verity",
        description="The job queues' names begin with this (PREFIX-questions, PREFIX-reports): several "
        "Verity deployments, or test runs, can share one broker.",
    )
    worker_stop_grace_s: float = Field(
        20.0,
        description="On SIGTERM (docker stop, a rolling restart) a job-queue worker takes no more runs and "
        "gives those in flight this long to end; one still going is handed to another worker, which goes on "
        "from its recorded steps (run_executor=dramatiq). Keep it below the container's stop grace period.",
    )
    run_max_attempts: int = Field(
        3,
        description="Times a run is started (run_executor=dramatiq) before it is set aside as failed "
        "for good (its worker died each time, or the machine failed under it).",
    )
    run_retry_backoff_s: float = Field(
        5.0,
        description="First wait before a run the machine failed under (e.g. a lost database) is started "
        "again (run_executor=dramatiq); it doubles each time, up to 12 times this.",
    )
    lease_ttl_s: float = Field(
        30.0,
        description="Lifetime of a node's claim on work only one node may do at a time (a big upload's "
        "background read, a number check, a run in a server's threads; app/db/nodes.py). The holder renews "
        "it every third of this; a node that died loses it after this long, and another node takes over.",
    )
    worker_poll_s: float = Field(1.0, description="How often an idle worker looks for queued runs, in seconds.")
    worker_heartbeat_s: float = Field(
        5.0,
        description="How often a worker marks its runs as alive and checks for stop requests, in seconds; a server "
        "that runs runs in its threads checks as often for a Stop pressed on another server.",
    )
    worker_stale_s: float = Field(
        60.0,
        description="A running run whose worker has not marked it alive for this long is taken to have "
        "lost its worker and is marked interrupted (it can be continued).",
    )
    trusted_origins: str = Field(
        "",
        description="Comma-separated origins (e.g. https://verity.example.com) whose pages may post to "
        "this server besides its own, for a proxy that rewrites the Host header. Other cross-site posts "
        "(forms, cookie-authenticated API calls) are refused with 403 cross_site_request.",
    )
    allowed_hosts: str = Field(
        "",
        description="Comma-separated host names (as typed in the browser's address bar) this server "
        "answers to without sign-in, besides localhost, IP addresses and public_url's host; * for any. "
        "Without sign-in, a page on another site could reach this server through a host name it points at "
        "127.0.0.1 (DNS rebinding); requests naming another host get 400 unknown_host. With sign-in the "
        "check is off: such a page has no session.",
    )
    api_docs: bool = Field(
        True,
        description="Serve the API documentation at /api/docs and /api/openapi.json; with sign-in "
        "required, only signed-in users see it.",
    )
    sse_poll_interval_s: float = Field(0.25, description="How often the event stream checks for new progress events.")
    sse_heartbeat_s: float = Field(10.0, description="Seconds between keep-alive comments on an idle event stream.")

    # --- "Check every number with analysis.py" (the run panel's button) ------------------------
    check_numbers_timeout_s: float = Field(
        600.0,
        description="Wall-time limit of one run of a report's analysis.py started from the page, in "
        "seconds; the script (and anything it started) is stopped at this limit and the page says so.",
    )
    check_numbers_cpu_s: int = Field(
        600, description="CPU-time limit of that run of analysis.py, in seconds (0: none)."
    )
    check_numbers_memory_mb: int = Field(
        4_096,
        description="Address-space limit of that run of analysis.py, in megabytes (0: none); a "
        "script that needs more stops and the page says it ran out of memory.",
    )
    check_numbers_max_output_mb: int = Field(
        8,
        description="Most of what that run of analysis.py prints that is kept (in analysis_output.txt), in "
        "megabytes: the head and the tail, with a line saying how much was left out; the rest is read and "
        "dropped as it comes.",
    )
    check_numbers_scratch_mb: int = Field(
        256,
        description="Writable space of that run of analysis.py, in MB: its folder is a file system in memory "
        "inside the sandbox (like run_python's), so what it writes never reaches the server's disk; code "
        "that writes more gets a 'no space' error. The re-run's Parquet copies of the datasets are written "
        "there too: raise it when the datasets' working copies come near it.",
    )

    # --- ingestion limits ------------------------------------------------------------------
    max_upload_mb: int = Field(
        200,
        description="Largest accepted upload, in megabytes: the body of a route that takes a file is "
        "refused (413) as soon as it passes this (plus 1 MB of form framing) while it arrives, and one "
        "declaring more is refused before it is read.",
    )
    max_request_mb: float = Field(
        2.0,
        description="Largest body of any other request (JSON API calls, page forms), in megabytes, "
        "counted while it arrives and refused (413) as soon as it passes; the longest such body is a "
        "200,000-character note (1.2 MB of JSON when every character is escaped).",
    )
    max_rows: int = Field(5_000_000, description="Most rows read from one sheet or CSV.")
    max_columns: int = Field(2_000, description="Most columns read from one sheet or CSV.")
    preview_rows: int = Field(20, description="Rows shown in previews and `inspect`.")
    background_ingest_mb: float = Field(
        10.0,
        description="Uploaded workbooks (.xlsx/.xlsm) larger than this, in megabytes, are shown "
        "at once from a streamed preview of their first rows while they are read. Every upload is "
        "read in a background thread (see upload_wait_s) and analysed once ready.",
    )
    upload_wait_s: float = Field(
        1.0,
        description="How long an upload's request waits for its background read, in seconds: a file "
        "read by then is answered as read (or refused, when it is bad input); a longer read is answered "
        "at once as loading, with its progress (rows read, percent) on the page and in the API.",
    )
    max_cells: int = Field(30_000_000, description="Most cells (rows x columns) read from one sheet or CSV.")
    max_uncompressed_mb: int = Field(
        1_500,
        description="Largest total unpacked size of a zip-based workbook (xlsx/xlsm/xlsb/ods) or .docx, "
        "in megabytes, checked from the zip directory before parsing (zip bombs); every part is then "
        "inflated once, as a stream, and a part that unpacks to more than the directory declares is "
        "refused as corrupt_file.",
    )
    max_compression_ratio: float = Field(
        200.0,
        description="Unpacked/packed size ratio of one part (over 8 MB) of a zip-based workbook above "
        "which its parse cost is checked before reading: it is inflated once, as a stream, and refused as a "
        "zip bomb when it holds more than 4 XML elements per cell of max_cells (a ratio alone is not refused: "
        "long repeated text packs well).",
    )
    parse_timeout_s: float = Field(
        120.0,
        description="Wall-time limit of reading one file, in seconds. Uploads, sheet switches and "
        "the CLI read in a child process (app.ingest.bounded) that is stopped at this limit; the file "
        "is reported as too_large.",
    )
    parse_memory_mb: int = Field(
        6_144,
        description="Memory, in megabytes, that reading one file may add to the reading child "
        "process (an address-space limit); a file that needs more is reported as too_large.",
    )
    parse_total_memory_mb: int = Field(
        12_288,
        description="Memory, in megabytes, all file reads running at once may use together: at most "
        "parse_total_memory_mb // parse_memory_mb files (at least one) are read at the same time by the "
        "processes that share this data folder; the others wait for their turn (a waiting upload says so).",
    )
    document_timeout_s: float = Field(
        30.0,
        description="Time limit of reading one reference document (.docx, .pdf, text), in seconds: it is "
        "read in a child process held to this much CPU time and wall time, then stopped and "
        "reported as too_large.",
    )
    document_memory_mb: int = Field(
        1_024,
        description="Memory, in megabytes, that reading one reference document may add to its child "
        "process (an address-space limit); a document that needs more is reported as too_large.",
    )
    document_max_pages: int = Field(300, description="Most pages of a reference PDF; a longer one is refused.")
    document_max_pdf_content_mb: float = Field(
        16.0,
        description="Most page content, in megabytes, the text of a reference PDF may be extracted from, "
        "summed over its pages before any is read (a drawing shared by every page counts once per page).",
    )
    document_max_paragraphs: int = Field(
        100_000, description="Most paragraphs (table cells' included) of a reference .docx; more is refused."
    )
    document_max_elements: int = Field(
        2_000_000,
        description="Most XML elements of a reference .docx's main part, counted while it is parsed as a "
        "stream; more is refused. Its unpacked size is held to max_uncompressed_mb as it is inflated.",
    )

    # --- agent budgets (SPEC §2, §5) -------------------------------------------------------
    context_threshold_tokens: int = Field(100_000, description="Context token threshold; intents use a ratio of it.")
    tool_budget_interactive: int = Field(
        50, description="Tool-call budget per turn for chat/consult/followup/data_prep."
    )
    tool_budget_analysis: int = Field(130, description="Tool-call budget per analysis turn.")
    tool_budget_deep: int = Field(200, description="Tool-call budget per deep turn.")
    max_rounds: int = Field(300, description="Hard stop: model rounds per turn before the turn is wrapped up.")
    turn_wall_time_s: float = Field(1800.0, description="Wall-time cap of one analysis turn, in seconds.")
    turn_wall_time_interactive_s: float = Field(
        600.0, description="Wall-time cap of one chat/consult/followup/data_prep turn, in seconds."
    )
    turn_wall_time_deep_s: float = Field(
        3600.0, description="Wall-time cap of one deep turn (full report, modelling), in seconds."
    )
    python_budget_interactive: int = Field(
        3, description="run_python calls allowed per chat/consult/followup/data_prep turn."
    )
    python_budget_analysis: int = Field(8, description="run_python calls allowed per analysis turn.")
    python_budget_deep: int = Field(15, description="run_python calls allowed per deep turn.")
    ban_after_failures: int = Field(
        2,
        description="An identical tool call (same tool, same arguments) that failed this many "
        "times is refused for the rest of the turn.",
    )
    converge_after_errors: int = Field(
        3,
        description="Consecutive failed tool calls after which the model is told to stop "
        "exploring; twice as many end the tool phase of the turn.",
    )
    intent_model_fallback: bool = Field(
        True,
        description="Ask the language model to classify a message when no intent rule "
        "decides (one small request without tools); the built-in analyst never needs it.",
    )

    # --- context cascade (SPEC §4) ---------------------------------------------------------
    knowledge_budget_chars: int = Field(
        3_000,
        description="Most characters of workspace knowledge (notes, reference documents) injected "
        "into one turn; when there is more, the passages most relevant to the question are chosen.",
    )
    memory_budget_chars: int = Field(
        1_500,
        description="Most characters of earlier runs' findings (the memory tier) injected into one "
        "turn, newest first; 0 turns memory off.",
    )
    knowledge_max_chars: int = Field(
        200_000, description="Longest note or reference document a workspace keeps, in characters."
    )
    tool_result_truncate_chars: int = Field(
        3_000, description="Tool results longer than this are saved to disk and truncated."
    )
    tool_result_persist_chars: int = Field(
        15_000, description="Tool results longer than this are replaced by a short preview."
    )
    tool_result_preview_chars: int = Field(
        2_000, description="Size of the preview left in context for persisted tool output."
    )
    context_keep_tool_results: int = Field(
        8,
        description="Micro-compaction keeps this many newest tool results whole; older ones "
        "become compact previews (full text on disk).",
    )
    context_keep_messages: int = Field(10, description="A context summary keeps this many newest messages whole.")

    # --- run_python sandbox (SPEC §7) ------------------------------------------------------
    sandbox_mode: Literal["auto", "bwrap", "unshare", "unsafe", "off"] = Field(
        "auto",
        description="Isolation of run_python: auto (bubblewrap, else unshare namespaces, else "
        "refuse), bwrap, unshare, unsafe (no isolation: trusted single-user machines only) or off.",
    )
    sandbox_cpu_s: int = Field(60, description="CPU-time limit of one run_python call, in seconds.")
    sandbox_wall_s: float = Field(120.0, description="Wall-time limit of one run_python call, in seconds.")
    sandbox_memory_mb: int = Field(
        2048, description="Memory one run_python call may add to the warm interpreter, in megabytes."
    )
    sandbox_max_procs: int = Field(64, description="Most processes and threads the sandbox user may run at once.")
    sandbox_max_files: int = Field(256, description="Most open files of one run_python call.")
    sandbox_max_output_chars: int = Field(
        50_000,
        description="Most characters of a run_python call's stdout (and of its stderr) kept in the "
        "tool result, the head and the tail; the context cascade then shows the model a preview and keeps "
        "the whole result readable with read_tool_output.",
    )
    sandbox_max_file_mb: int = Field(
        64, description="Largest file (output, saved table, figure) one run_python call may write, in MB."
    )
    sandbox_max_reply_mb: int = Field(
        4,
        description="Largest result message one run_python call may send back to the server, in MB (its "
        "printed output is already cut to sandbox_max_output_chars inside the sandbox: only forged or runaway "
        "results come near it). A larger one is refused with a clear error while it is read, never parsed or "
        "stored; the text fields of an accepted one are cut to sandbox_max_output_chars again on the host.",
    )
    sandbox_call_files_mb: int = Field(
        128,
        description="Most bytes of figures and saved tables copied out of one run_python call to the host, "
        "in MB; a file is copied once however many hard links or names the call gives it.",
    )
    sandbox_idle_s: float = Field(
        600.0, description="A workspace's warm sandbox process is closed after this many idle seconds."
    )
    sandbox_scratch_mb: int = Field(
        256,
        description="Writable space of a workspace's sandbox, in MB, in memory: the current folder of a "
        "run_python call and /tmp hold at most this much each (both are emptied after every call); code "
        "that writes more gets a clear error.",
    )
    sandbox_keep_mb: int = Field(
        256,
        description="Disk space, in MB, a workspace keeps for the saved tables and figures of past "
        "run_python calls (outside the sandbox); the oldest calls' folders are removed first.",
    )
    sandbox_max_warm: int = Field(
        8,
        description="Most warm sandboxes (one per recently used workspace) kept at once by one server "
        "process; the least recently used is closed when another workspace needs one, and a call waits "
        "(up to its wall-time limit) while all are busy.",
    )
    sandbox_warm_memory_mb: int = Field(
        2_048,
        description="Memory (PSS), in MB, all warm sandboxes of one server process may use together; "
        "above it the least recently used idle ones are closed.",
    )
    figures_keep_mb: int = Field(
        256,
        description="Disk space, in MB, a workspace's figures/ folder (the charts of its runs, run_python's "
        "included) may hold; the oldest figures are removed first, with the past calls they came from. "
        "A report keeps its own copies of its figures from the moment it is made.",
    )

    @model_validator(mode="after")
    def _fill_defaults(self) -> Settings:
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
