"""Isolated execution for run_python: a warm, pre-imported parent per workspace inside an
operating-system sandbox (bubblewrap, else `unshare` namespaces, else refused unless unsafe mode
is explicitly on), forking one clean child per call.

- `host`: limits, isolation detection, and the public names of the host side (re-exported from
  `launch`: the bwrap/unshare command and mounts; `pool`: the warm parents, `SandboxPool`;
  `results`: `RunOutcome` and the checks on the files the sandbox reports).
- `worker`: runs inside the sandbox (standard library at import; the analysis stack in `preload`):
  the fork loop; `worker_parent` (one call), `worker_child` (limits, capture, artefacts) and
  `worker_errors` (error texts and hints).
- `seccomp`, `nsroot`, `protocol`: the filter, the unshare filesystem view, the message framing.

Standard library only at import time; no web or agent imports.
"""

from sandbox.host import (Isolation, LaunchSpec, Limits, RunOutcome, SandboxPool, SandboxUnavailable,
                          detect_isolation, get_pool)

__all__ = ["Isolation", "LaunchSpec", "Limits", "RunOutcome", "SandboxPool", "SandboxUnavailable",
           "detect_isolation", "get_pool"]
