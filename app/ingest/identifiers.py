"""Which column names say "this column identifies rows" (order_id, Order ID, 编号, rownames ...).

A reading rule: ingest types such columns `identifier` whatever their values look like, and the
analysis tools (analysis_tools.common) use the same rule when they are handed a plain DataFrame.
It lives here, with no dependencies, so that reading a file does not load the tools.
"""

from __future__ import annotations

import re
from typing import Any

_ID_NAME = re.compile(
    r"(^|[\s_\-./#(])(id|uuid|guid|code|sku)($|[\s_\-./)])|(^|[_\s.-])(key|no|number)$"
    r"|^(rownames|index|row_?id|unnamed: ?0)$|编号|代码|单号|工号|学号|序号|订单号|身份证",
    re.I,
)
_ID_CAMEL = re.compile(r"[a-z](Id|ID)$")


def is_identifier_name(name: Any) -> bool:
    """Names that say "this column identifies rows" (order_id, Order ID, 编号, rownames ...)."""
    text = str(name or "")
    return bool(_ID_NAME.search(text) or _ID_CAMEL.search(text))
