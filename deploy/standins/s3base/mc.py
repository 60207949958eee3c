#!/usr/local/bin/python
"""Stand-in for MinIO's client `mc`: only what docker-compose.yml uses, through boto3.

    mc alias set NAME URL ACCESS_KEY SECRET_KEY
    mc mb [--ignore-existing|-p] NAME/BUCKET
    mc ready NAME          (exit 0 when the server answers a bucket listing)

Aliases are kept in ~/.mc/config.json, like mc's; `local` is http://localhost:9000 with
MINIO_ROOT_USER / MINIO_ROOT_PASSWORD, as in the minio/minio image.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import boto3
from botocore.config import Config

CONFIG = Path.home() / ".mc" / "config.json"


def aliases() -> dict[str, dict[str, str]]:
    """The stored aliases, with `local` always present."""
    known = json.loads(CONFIG.read_text())["aliases"] if CONFIG.exists() else {}
    known.setdefault(
        "local",
        {
            "url": "http://localhost:9000",
            "accessKey": os.environ.get("MINIO_ROOT_USER", "minioadmin"),
            "secretKey": os.environ.get("MINIO_ROOT_PASSWORD", "minioadmin"),
        },
    )
    return known


def client(alias: str):
    """An S3 client for one alias, path-style like MinIO's."""
    entry = aliases()[alias]
    return boto3.client(
        "s3",
        endpoint_url=entry["url"],
        aws_access_key_id=entry["accessKey"],
        aws_secret_access_key=entry["secretKey"],
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, connect_timeout=3, read_timeout=5, retries={"max_attempts": 1}),
    )


def main(argv: list[str]) -> int:
    if argv[:2] == ["alias", "set"] and len(argv) == 6:
        known = aliases()
        known[argv[2]] = {"url": argv[3], "accessKey": argv[4], "secretKey": argv[5]}
        CONFIG.parent.mkdir(parents=True, exist_ok=True)
        CONFIG.write_text(json.dumps({"version": "10", "aliases": known}))
        print(f"Added `{argv[2]}` successfully.")
        return 0
    if argv[:1] == ["mb"]:
        ignore = any(flag in argv for flag in ("--ignore-existing", "-p"))
        target = [arg for arg in argv[1:] if not arg.startswith("-")][0]
        alias, bucket = target.split("/", 1)
        s3 = client(alias)
        existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
        if bucket in existing:
            if ignore:
                print(f"Bucket `{target}` already exists.")
                return 0
            print(
                f"mc: <ERROR> Unable to make bucket `{target}`. Your previous request to create the named bucket succeeded and you already own it.",
                file=sys.stderr,
            )
            return 1
        s3.create_bucket(Bucket=bucket)
        print(f"Bucket created successfully `{target}`.")
        return 0
    if argv[:1] == ["ready"] and len(argv) == 2:
        try:
            client(argv[1]).list_buckets()
        except Exception as error:  # noqa: BLE001 - any failure means not ready
            print(f"The cluster is unreachable: {error}", file=sys.stderr)
            return 1
        print(f"The cluster '{argv[1]}' is ready")
        return 0
    print(f"mc stand-in: unsupported command {argv}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
