"""Where the context cascade puts what it takes out of the context (SPEC §4): nothing is lost.

    <workspace>/tool_outputs/{id}.txt                 every tool output, in full, as produced
    <workspace>/tool_outputs/{id}.json                beside it, the same result as plain data
    <workspace>/transcripts/transcript_{stamp}.jsonl   the whole conversation before a summary

The text and the transcripts are read back with `read_tool_output` (an id is a tool-call id or a
transcript name); the plain-data result (analysis_tools.ResultRecord) by the toolbox's results
(tools/results.py), for a turn resumed in another process.
"""

from __future__ import annotations

import json
import os
import re
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from app.config import Settings
from app.storage import NodeFiles, node_files

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def safe_id(raw: str) -> str:
    """A tool-call id as a file name (ids come from the model: never trust them as paths)."""
    cleaned = _UNSAFE.sub("_", str(raw or "output")).strip("._") or "output"
    return cleaned[:120]


class OutputStore:
    def __init__(self, root: Path, files: NodeFiles | None = None):
        self.root = Path(root)
        self.outputs = self.root / "tool_outputs"
        self.transcripts = self.root / "transcripts"
        # with an object store (app/storage): what is written goes there too, and a file written by
        # another node (a turn resumed elsewhere) is fetched into this node's cache before it is looked at
        self.files = files if files is not None and files.store.remote else None

    @classmethod
    def of(cls, settings: Settings, workspace_id: str) -> OutputStore:
        """The workspace's store, through this node's files (the object store when one is set)."""
        return cls(settings.workspace_dir(workspace_id), node_files(settings))

    def _here(self, path: Path) -> bool:
        """The file is in this node's cache (fetched from the object store when another node wrote it)."""
        if path.is_file():
            return True
        return self.files is not None and self.files.local(self.files.key_of(path)) is not None

    def _keep(self, path: Path) -> None:
        if self.files is not None:
            self.files.saved(path)

    def save_output(self, call_id: str, text: str) -> str:
        """Write a tool output in full; return its id. The same text under the same id is written
        once; a different text (a call id reused by another run) gets a numbered id."""
        self.outputs.mkdir(parents=True, exist_ok=True)
        base = safe_id(call_id)
        candidate, n = base, 1
        while True:
            path = self.outputs / f"{candidate}.txt"
            self._here(path)  # another node's output under this id is fetched first: never overwritten
            if _create_once(path, text):
                self._keep(path)
                return candidate
            if _read_exact(path) == text:
                return candidate
            n += 1
            candidate = f"{base}_{n}"

    def save_result(self, output_id: str, record_json: str) -> None:
        """Write a result's plain data beside its text (once: the same text is the same result)."""
        self.outputs.mkdir(parents=True, exist_ok=True)
        path = self.outputs / f"{safe_id(output_id)}.json"
        if not self._here(path) and _create_once(path, record_json):
            self._keep(path)

    def read_result(self, output_id: str) -> str | None:
        path = self.outputs / f"{safe_id(output_id)}.json"
        return _read_exact(path) if self._here(path) else None

    def output_id_of(self, call_id: str, text: str) -> str | None:
        """The id `save_output(call_id, text)` gave this text, without writing anything; None when
        it was never saved."""
        base = safe_id(call_id)
        candidate, n = base, 1
        while self._here(path := self.outputs / f"{candidate}.txt"):
            if _read_exact(path) == text:
                return candidate
            n += 1
            candidate = f"{base}_{n}"
        return None

    def save_transcript(self, messages: list[dict[str, Any]]) -> str:
        """Write the whole conversation as JSON lines; return its id (transcript_{timestamp})."""
        self.transcripts.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S_%f")
        name = f"transcript_{stamp}"
        body = "".join(json.dumps(m, ensure_ascii=False, default=str) + "\n" for m in messages)
        _write_atomic(self.transcripts / f"{name}.jsonl", body)
        self._keep(self.transcripts / f"{name}.jsonl")
        return name

    def path_of(self, output_id: str) -> Path | None:
        name = safe_id(output_id)
        for path in (
            self.outputs / f"{name}.txt",
            self.transcripts / f"{name}.jsonl",
            self.transcripts / f"{name.removesuffix('.jsonl')}.jsonl",
        ):
            if self._here(path):
                return path
        return None

    def read(self, output_id: str) -> str | None:
        path = self.path_of(output_id)
        return _read_exact(path) if path else None

    def ids(self) -> list[str]:
        if self.files is not None:  # every node's, as the object store lists them
            listed = [
                Path(k)
                for folder in (self.outputs, self.transcripts)
                for k in self.files.store.keys(self.files.key_of(folder))
            ]
            return [p.stem for p in listed if p.suffix == ".txt"] + [p.stem for p in listed if p.suffix == ".jsonl"]
        found = [p.stem for p in sorted(self.outputs.glob("*.txt"))] if self.outputs.is_dir() else []
        if self.transcripts.is_dir():
            found += [p.stem for p in sorted(self.transcripts.glob("*.jsonl"))]
        return found


# newline="" both ways: the text comes back byte for byte (no \r\n translation). Temporary names
# are unique per process and thread: runs of one workspace write side by side (several worker
# threads or processes), and tool-call ids repeat across runs.
def _write_temp(path: Path, text: str) -> Path:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8", errors="surrogatepass", newline="") as handle:
        handle.write(text)
    return tmp


def _write_atomic(path: Path, text: str) -> None:
    _write_temp(path, text).replace(path)


def _create_once(path: Path, text: str) -> bool:
    """Write `text` at `path` unless a file is there already. A hard link either creates the name
    or fails, so of two writers racing for one name exactly one wins, with its whole text."""
    tmp = _write_temp(path, text)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: an exclusive create is atomic too
        return _create_exclusive(path, text)
    finally:
        tmp.unlink(missing_ok=True)


def _create_exclusive(path: Path, text: str) -> bool:
    try:
        with open(path, "x", encoding="utf-8", errors="surrogatepass", newline="") as handle:
            handle.write(text)
        return True
    except FileExistsError:
        return False


def _read_exact(path: Path) -> str:
    with open(path, encoding="utf-8", errors="surrogatepass", newline="") as handle:
        return handle.read()
