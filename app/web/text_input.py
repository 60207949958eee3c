"""Text that no database can store is refused at the edge, on every route, before any view runs.

PostgreSQL refuses NUL characters in text, and no UTF-8 database or file takes a lone surrogate
(a JSON `"\\ud800"` decodes to one). Rather than letting a view fail half-way with a 500, the
app-wide dependency `check_text_input` looks at the path, the query and the already-parsed body
(form fields, file names, JSON strings and keys) and answers 400 `invalid_text` with a hint.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile

from app.web.deps import ApiError

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def text_problem(value: str) -> str | None:
    """What makes a string unstorable: a NUL character or broken Unicode (a lone surrogate)."""
    if "\x00" in value:
        return "a NUL character (\\u0000)"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "broken Unicode (a lone surrogate such as \\ud800)"
    return None


def strings_in(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """(location, string) for every string in a parsed JSON value, keys included."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key, f"{where}.{key!s:.40}")
            yield from strings_in(item, f"{where}.{key!s:.40}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from strings_in(item, f"{where}[{n}]")


async def body_strings(request: Request) -> list[tuple[str, str]]:
    """The strings of the request body as FastAPI parsed it for the view (the parse is cached on
    the request, so nothing is read twice); bodies of other types are the view's own business."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.method in ("GET", "HEAD"):
        return []
    if content_type in FORM_TYPES:
        form = await request.form()
        found = []
        for key, value in form.multi_items():
            found += [(f"form.{key:.40}", key)]
            if isinstance(value, UploadFile):
                found.append((f"form.{key:.40}.filename", value.filename or ""))
            else:
                found.append((f"form.{key:.40}", value))
        return found
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            return list(strings_in(await request.json(), "body"))
        except ValueError:  # not JSON at all: the view's validation answers it
            return []
    return []


async def check_text_input(request: Request) -> None:
    """Runs before every route (an app-wide dependency, ahead of `authorize`, which looks ids up)."""
    found = [(f"path.{k}", str(v)) for k, v in request.path_params.items()]
    found += [(f"query.{k:.40}", v) for k, v in request.query_params.multi_items()]
    found += [(f"query.{k:.40}", k) for k in request.query_params]
    found += await body_strings(request)
    for where, value in found:
        if problem := text_problem(value):
            raise ApiError(
                400,
                "invalid_text",
                f"The request contains {problem} in {where.encode('utf-8', 'replace').decode()}, "
                "which cannot be stored.",
                "Remove the character (it often comes from copying out of another program) and send it again.",
            )
