"""Where Verity's files live for good: one interface, two backends.

Every file Verity keeps (an upload, its Parquet working copies, figures, a report's files, the large
payloads of a trace) has a *key*: its path relative to the data folder, in POSIX form, e.g.
`workspaces/3f2a…/files/9c1d…/sales.xlsx`. The database holds keys, never paths of one machine.

- `LocalStore`: the data folder itself (the embedded default). The key is the file's place on this
  disk, so putting a file that is already there copies nothing: one machine behaves as before.
- `S3Store`: any S3-compatible object store (AWS S3, MinIO, Cloudflare R2, Aliyun OSS) through boto3.
  boto3 is AWS's own SDK, released weekly, with multipart uploads and retries built in; it talks to
  other S3 servers through `endpoint_url`. (s3fs pins aiobotocore to narrow botocore ranges, which
  fights with boto3 in one environment; obstore is younger. The store calls are few and plain.)

Files are read through the node's cache (app/storage/files.py), never from the store directly.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import urlparse


class StoreUnavailable(OSError):
    """The object store could not be reached or refused the request (not: the file is absent).
    A file that cannot be fetched for this reason is not damaged; the caller says the store is down."""


def check_key(key: str) -> str:
    """A key is a relative POSIX path with no `..`, `.` or empty parts (it names a file inside the store)."""
    parts = PurePosixPath(key).parts
    if (
        not key
        or key.startswith("/")
        or key.endswith("/")
        or "//" in key
        or "\\" in key
        or any(p in ("", ".", "..") for p in parts)
    ):
        raise ValueError(f"not a storage key: {key!r}")
    return key


class ObjectStore(Protocol):
    """What Verity asks of a store. Keys are `check_key` keys; a missing key is not an error."""

    kind: str  # "local" | "s3": what the start-up check and the docs name
    remote: bool  # False: the store is this node's own data folder (nothing to fetch or upload)

    def put_file(self, key: str, source: Path) -> None:
        """Store the file at `source` under `key` (replacing what was there)."""

    def get_file(self, key: str, target: Path) -> bool:
        """Write the object into `target` (whole, or not at all); False when there is no such key."""

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None: ...

    def delete_prefix(self, prefix: str) -> int:
        """Delete every key under `prefix` (a folder: `workspaces/abc/`); how many went."""

    def keys(self, prefix: str) -> list[str]: ...

    def holds_any(self, prefix: str) -> bool:
        """Whether any key is under `prefix` (a folder), asked cheaply (one short listing)."""

    def modified(self, prefix: str) -> dict[str, float]:
        """Every key under `prefix` (a folder) -> when it was last written (seconds since the epoch)."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# A fetched file gets the mode a file written here would (mkstemp makes 0600): the sandbox reads the
# cache's files as another user (run_python's tables, analysis.py's uploads).
FILE_MODE = 0o666 & ~_umask()


def _temporary_beside(target: Path) -> str:
    """A new empty file beside `target` (same file system: renamed into place), with FILE_MODE."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=".part", dir=target.parent)
    os.fchmod(handle, FILE_MODE)
    os.close(handle)
    return temporary


def _atomic_copy(source: Path, target: Path) -> None:
    """Copy through a temporary file beside the target and rename it: no reader sees half a file."""
    temporary = _temporary_beside(target)
    try:
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@dataclass
class LocalStore:
    """The data folder as the store: a key is the file `root / key`."""

    root: Path
    kind: str = "local"
    remote: bool = False

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    def put_file(self, key: str, source: Path) -> None:
        target = self.path(key)
        if target.exists() and source.resolve() == target.resolve():
            return  # the file is already where the key says: nothing to copy
        _atomic_copy(source, target)

    def get_file(self, key: str, target: Path) -> bool:
        source = self.path(key)
        if not source.is_file():
            return False
        if target.exists() and source.resolve() == target.resolve():
            return True
        _atomic_copy(source, target)
        return True

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def delete(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    def delete_prefix(self, prefix: str) -> int:
        folder = self.path(prefix.rstrip("/"))
        if not folder.is_dir():
            return 0
        count = sum(1 for p in folder.rglob("*") if p.is_file())
        shutil.rmtree(folder, ignore_errors=True)
        return count

    def holds_any(self, prefix: str) -> bool:
        folder = self.path(prefix.rstrip("/"))
        return folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))

    def keys(self, prefix: str) -> list[str]:
        folder = self.path(prefix.rstrip("/"))
        if not folder.is_dir():
            return []
        return sorted(p.relative_to(self.root).as_posix() for p in folder.rglob("*") if p.is_file())

    def modified(self, prefix: str) -> dict[str, float]:
        found = {}
        for key in self.keys(prefix):
            try:
                found[key] = self.path(key).stat().st_mtime
            except OSError:
                continue  # removed meanwhile
        return found


class S3Store:
    """An S3-compatible bucket, under an optional prefix (`s3://bucket/some/prefix`)."""

    kind = "s3"
    remote = True

    def __init__(
        self,
        url: str,
        endpoint_url: str | None = None,
        region: str | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        addressing_style: str = "auto",
        timeout_s: float = 30.0,
        max_attempts: int = 4,
    ) -> None:
        import boto3
        from botocore.config import Config

        parsed = urlparse(url)
        if parsed.scheme != "s3" or not parsed.netloc:
            raise ValueError(f"storage_url must look like s3://bucket/prefix, not {url!r}")
        self.bucket = parsed.netloc
        self.prefix = parsed.path.strip("/")
        self.url = url
        style = addressing_style if addressing_style != "auto" else ("path" if endpoint_url else "virtual")
        config = Config(
            s3={"addressing_style": style},
            connect_timeout=timeout_s,
            read_timeout=timeout_s,
            retries={"max_attempts": max_attempts, "mode": "standard"},
        )
        # Credentials left unset are found the usual AWS way (environment, ~/.aws, an instance role).
        self.client: Any = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint_url or None,
            region_name=region or None,
            aws_access_key_id=access_key_id or None,
            aws_secret_access_key=secret_access_key or None,
            config=config,
        )

    def name(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _call(self, method: str, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, method)(**kwargs)
        except ClientError:
            raise  # the caller decides what a 404 means
        except BotoCoreError as exc:  # no connection, a timeout, bad credentials' signing ...
            raise StoreUnavailable(f"the object store {self.url} cannot be reached: {exc}") from exc

    @staticmethod
    def _missing(exc: BaseException) -> bool:
        code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
        return code in ("404", "NoSuchKey", "NotFound")

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        return StoreUnavailable(f"the object store {self.url} refused the request: {exc}")

    def put_file(self, key: str, source: Path) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:  # upload_file: multipart for large files, retried by boto3's transfer manager
            self.client.upload_file(str(source), self.bucket, self.name(key))
        except (BotoCoreError, ClientError) as exc:
            raise self._unavailable(exc) from exc
        except Exception as exc:  # S3UploadFailedError wraps the cause
            if type(exc).__module__.startswith("boto3"):
                raise self._unavailable(exc) from exc
            raise

    def get_file(self, key: str, target: Path) -> bool:
        from botocore.exceptions import ClientError

        temporary = _temporary_beside(target)
        try:
            try:
                response = self._call("get_object", Bucket=self.bucket, Key=self.name(key))
            except ClientError as exc:
                if self._missing(exc):
                    return False
                raise self._unavailable(exc) from exc
            with open(temporary, "wb") as out:
                for chunk in response["Body"].iter_chunks(1 << 20):
                    out.write(chunk)
            os.replace(temporary, target)
            return True
        finally:
            Path(temporary).unlink(missing_ok=True)

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._call("head_object", Bucket=self.bucket, Key=self.name(key))
            return True
        except ClientError as exc:
            if self._missing(exc):
                return False
            raise self._unavailable(exc) from exc

    def delete(self, key: str) -> None:
        from botocore.exceptions import ClientError

        try:
            self._call("delete_object", Bucket=self.bucket, Key=self.name(key))
        except ClientError as exc:
            if not self._missing(exc):
                raise self._unavailable(exc) from exc

    def _names(self, prefix: str) -> list[str]:
        return list(self._listed(prefix))

    def _listed(self, prefix: str) -> dict[str, float]:
        """Object name -> when it was last written, for every object under `prefix` (a folder)."""
        from botocore.exceptions import ClientError

        start = self.name(prefix.rstrip("/")) + "/"
        names: dict[str, float] = {}
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=start):
                names.update({item["Key"]: item["LastModified"].timestamp() for item in page.get("Contents", [])})
        except ClientError as exc:
            raise self._unavailable(exc) from exc
        except Exception as exc:
            if type(exc).__module__.startswith("botocore"):
                raise StoreUnavailable(f"the object store {self.url} cannot be reached: {exc}") from exc
            raise
        return names

    def holds_any(self, prefix: str) -> bool:
        from botocore.exceptions import ClientError

        start = self.name(prefix.rstrip("/")) + "/"
        try:
            listed = self._call("list_objects_v2", Bucket=self.bucket, Prefix=start, MaxKeys=1)
        except ClientError as exc:
            raise self._unavailable(exc) from exc
        return bool(listed.get("KeyCount") or listed.get("Contents"))

    def keys(self, prefix: str) -> list[str]:
        cut = len(self.prefix) + 1 if self.prefix else 0
        return sorted(name[cut:] for name in self._names(prefix))

    def modified(self, prefix: str) -> dict[str, float]:
        cut = len(self.prefix) + 1 if self.prefix else 0
        return {name[cut:]: written for name, written in self._listed(prefix).items()}

    def delete_prefix(self, prefix: str) -> int:
        from botocore.exceptions import ClientError

        names = self._names(prefix)
        for start in range(0, len(names), 1000):  # DeleteObjects takes at most 1,000 keys
            batch = [{"Key": n} for n in names[start : start + 1000]]
            try:
                self._call("delete_objects", Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
            except ClientError as exc:
                raise self._unavailable(exc) from exc
        return len(names)
