"""A node's files: the object store, seen through this node's bounded local cache.

The cache is the data folder itself: the file of key K is `data_dir / K` on every node, so the code
that writes a file (a working copy, a chart, a PDF) writes it where it always did and then hands it
to the store (`saved`); code that reads one asks for it by key (`local`) and gets that path, fetched
from the store first when this node does not hold it. A file missing from the cache is fetched,
never taken as damage; only a file the store does not hold either is missing.

With the local backend the store *is* the data folder: `saved` copies nothing, `local` only looks,
nothing is evicted: one machine behaves exactly as before. With a remote store the cache is held to
`cache_max_mb`: the least recently used files that the store holds are removed first.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from pathlib import Path

from app.config import Settings
from app.storage.backends import LocalStore, ObjectStore, S3Store, StoreUnavailable, check_key

log = logging.getLogger(__name__)

# Where a key starts inside a path written before keys (an absolute path of one machine, or one
# relative to its working directory): every kept file is under `<data_dir>/workspaces/<id>/`.
_LEGACY = re.compile(r"(?:^|/)(workspaces/[\w-]{1,32}/.+)$")
EVICT_GRACE_S = 60.0  # a cached file used this recently is never evicted
PRUNE_GRACE_S = 24 * 3600.0  # files of an unknown workspace younger than this stay (its row may be uncommitted)
CACHED_ROOT = "workspaces"  # the cache evicts only under here (never the database, logs or locks)


def key_from_legacy_path(value: str) -> str:
    """The key of a value stored before keys: an absolute or cwd-relative path under a data folder
    (`/srv/verity/data/workspaces/ab12/files/cd34/x.csv` -> `workspaces/ab12/files/cd34/x.csv`).
    A value that already is a key is returned as it is; one that names no kept file, as it is too."""
    if not value:
        return value
    posix = value.replace("\\", "/")
    found = _LEGACY.search(posix)
    return found.group(1) if found else value


class NodeFiles:
    """The store and this node's cache of it (one per data folder and store)."""

    def __init__(self, settings: Settings, store: ObjectStore) -> None:
        self.root = Path(settings.data_dir)
        self.store = store
        self.limit_bytes = int(settings.cache_max_mb * 1024 * 1024)
        self._evicting = threading.Lock()
        self._added = 0  # bytes fetched or written since the cache was last measured
        self._measured = False

    # --- keys and paths -------------------------------------------------------------------
    def key_of(self, path: Path | str) -> str:
        """The key of a file inside the data folder (the cache). A file outside it (only a test's own
        folder) keeps its absolute path, which no other node can read: `is_key` tells them apart."""
        absolute = Path(path).resolve()
        if not absolute.is_relative_to(self.root.resolve()):
            return str(absolute)
        return check_key(absolute.relative_to(self.root.resolve()).as_posix())

    def path_of(self, key: str) -> Path:
        """Where the file of `key` is (or would be) in this node's cache; nothing is fetched. An absolute
        path (a row written before keys and not migrated, or a test's own file) is itself."""
        if Path(key).is_absolute():
            return Path(key)
        return self.root / check_key(key)

    # --- reading --------------------------------------------------------------------------
    def local(self, key: str) -> Path | None:
        """The cached file of `key`, fetched from the store when this node lacks it; None when the store
        does not hold it either. Raises StoreUnavailable when the store cannot be asked (not damage)."""
        if not key:
            return None
        try:
            path = self.path_of(key)
        except ValueError:  # names nothing in the store (a report's figure path the user cannot have made)
            return None
        if path.is_file():
            if self.store.remote and not Path(key).is_absolute():
                _touch(path)  # recently used: evicted last
            return path
        if not self.store.remote or Path(key).is_absolute() or not self.store.get_file(key, path):
            return None
        log.info("fetched %s from the %s store", key, self.store.kind)
        self._maybe_evict(keep=path)
        return path

    def local_folder(self, prefix: str) -> Path:
        """Every file under `prefix` (a folder key) in the cache, fetched as needed; the folder."""
        folder = self.path_of(prefix.rstrip("/"))
        if self.store.remote:
            for key in self.store.keys(prefix):
                if not self.path_of(key).is_file():
                    self.store.get_file(key, self.path_of(key))
        return folder

    # --- writing --------------------------------------------------------------------------
    def saved(self, path: Path | str) -> str:
        """Hand a file just written in the cache to the store; its key."""
        key = self.key_of(path)
        if self.store.remote and not Path(key).is_absolute():
            self.store.put_file(key, Path(path))
            self._maybe_evict(keep=Path(path))
        return key

    def saved_folder(self, folder: Path) -> list[str]:
        """Every file under a cache folder handed to the store (those the store lacks or that changed
        size); their keys."""
        if not folder.is_dir():
            return []
        keys = []
        have = set(self.store.keys(self.key_of(folder))) if self.store.remote else set()
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".part")):
            key = self.key_of(path)
            if self.store.remote and key not in have:
                self.store.put_file(key, path)
            keys.append(key)
        return keys

    # --- removing -------------------------------------------------------------------------
    def remove(self, key: str) -> None:
        """Delete a file from the store and from this node's cache."""
        if not key:
            return
        if not Path(key).is_absolute():
            self.store.delete(key)
        self.path_of(key).unlink(missing_ok=True)

    def remove_folder(self, prefix: str) -> None:
        """Delete every file under a folder key from the store and this node's cache."""
        import shutil

        self.store.delete_prefix(prefix)
        shutil.rmtree(self.path_of(prefix.rstrip("/")), ignore_errors=True)

    def prune_deleted_workspaces(
        self, live: set[str], grace_s: float = PRUNE_GRACE_S, dry_run: bool = False
    ) -> dict[str, int]:
        """Delete from the store (and this node's cache) the files of workspaces the database no longer
        holds (`live`: the ids it does): left behind when a deletion's store step failed, or by a node
        that died while deleting. A workspace any of whose files was written in the last `grace_s`
        seconds is kept: its row may not be committed yet (a workspace made and filled in one
        transaction). Returns workspace id -> how many files went (or would go, with `dry_run`)."""
        now, pruned = time.time(), {}
        by_workspace: dict[str, list[float]] = {}
        for key, when in self.store.modified(CACHED_ROOT).items():
            parts = key.split("/")
            if len(parts) > 2:
                by_workspace.setdefault(parts[1], []).append(when)
        for workspace_id, writes in sorted(by_workspace.items()):
            if workspace_id in live or now - max(writes) < grace_s:
                continue
            pruned[workspace_id] = len(writes)
            if not dry_run:
                self.remove_folder(f"{CACHED_ROOT}/{workspace_id}")
        if pruned and not dry_run:
            log.info("store: removed the files of %d deleted workspaces", len(pruned))
        return pruned

    # --- the bounded cache ----------------------------------------------------------------
    def _maybe_evict(self, keep: Path | None = None) -> None:
        if not self.store.remote or self.limit_bytes <= 0:
            return
        try:
            self._added += keep.stat().st_size if keep is not None else 0
        except OSError:
            pass
        # measuring walks the cache: once at first, then after a twentieth of the limit has come in
        if self._measured and self._added < self.limit_bytes // 20:
            return
        if not self._evicting.acquire(blocking=False):
            return  # another thread of this node is at it
        try:
            self._added, self._measured = 0, True
            self.evict(keep)
        except StoreUnavailable:
            log.warning("cache eviction skipped: the object store cannot be reached")
        finally:
            self._evicting.release()

    def drop_deleted_workspaces(self) -> list[str]:
        """Remove this node's cached folders of workspaces the store no longer holds (deleted through
        another node: their rows are gone, so nothing serves them, and their files must not linger here
        either). A folder changed in the last EVICT_GRACE_S seconds stays (a workspace just made, its
        first file not stored yet). Returns the workspace ids removed."""
        import shutil

        top = self.root / CACHED_ROOT
        removed = []
        for folder in sorted(top.iterdir()) if top.is_dir() else []:
            try:  # anything inside written lately (an upload being copied in) keeps it
                newest = max([folder.stat().st_mtime] + [p.stat().st_mtime for p in folder.rglob("*")])
                recent = time.time() - newest < EVICT_GRACE_S
            except OSError:
                continue
            if not folder.is_dir() or recent or self.store.holds_any(f"{CACHED_ROOT}/{folder.name}"):
                continue
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
        if removed:
            log.info("cache: removed the folders of %d workspaces deleted elsewhere", len(removed))
        return removed

    def evict(self, keep: Path | None = None, grace_s: float | None = None) -> int:
        """Remove the least recently used cached files until the cache fits cache_max_mb; only files the
        store holds go (a file not yet stored, or written by code that keeps it on this node, stays), and
        none used in the last `grace_s` seconds (a run or the sandbox may be about to open it: the cache
        may pass its limit for that long). Returns the bytes removed."""
        top = self.root / CACHED_ROOT
        if not self.store.remote or self.limit_bytes <= 0 or not top.is_dir():
            return 0
        self.drop_deleted_workspaces()
        files = []
        for path in top.rglob("*"):
            try:
                if path.is_file() and not path.name.endswith((".part", ".lock")):
                    status = path.stat()
                    files.append((max(status.st_atime, status.st_mtime), status.st_size, path))
            except OSError:
                continue  # removed meanwhile
        total = sum(size for _, size, _ in files)
        freed, recent = 0, time.time() - (EVICT_GRACE_S if grace_s is None else grace_s)
        for used, size, path in sorted(files, key=lambda f: f[0]):
            if total - freed <= self.limit_bytes or used > recent:
                break  # the rest were used more recently still
            if keep is not None and path == keep:
                continue
            key = self.key_of(path)
            if not self.store.exists(key):
                continue
            path.unlink(missing_ok=True)
            freed += size
        if freed:
            log.info("cache: removed %d bytes of files the store holds (limit %d)", freed, self.limit_bytes)
        return freed


def _touch(path: Path) -> None:
    try:
        now = time.time()
        os.utime(path, (now, path.stat().st_mtime))
    except OSError:
        pass


_nodes: dict[tuple[str, ...], NodeFiles] = {}
_nodes_lock = threading.Lock()


def store_of(settings: Settings) -> ObjectStore:
    """The object store the settings name (the data folder when storage_url is unset)."""
    url = (settings.storage_url or "").strip()
    if not url or url.startswith("file:"):
        return LocalStore(Path(settings.data_dir))
    return S3Store(
        url,
        endpoint_url=settings.storage_endpoint_url,
        region=settings.storage_region,
        access_key_id=settings.storage_access_key_id,
        secret_access_key=settings.storage_secret_access_key,
        addressing_style=settings.storage_addressing_style,
        max_attempts=settings.storage_retries,  # botocore's count of retries after the first try
    )


def node_files(settings: Settings) -> NodeFiles:
    """This node's files for the settings (one per data folder, store and cache size; made once)."""
    identity = (
        str(Path(settings.data_dir).resolve()),
        settings.storage_url or "",
        settings.storage_endpoint_url or "",
        str(settings.cache_max_mb),
        str(settings.storage_retries),
    )
    with _nodes_lock:
        files = _nodes.get(identity)
        if files is None:
            files = _nodes[identity] = NodeFiles(settings, store_of(settings))
        return files
