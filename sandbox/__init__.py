"""Isolated execution for run_python: a warm, pre-imported parent per workspace inside an
operating-system sandbox (bubblewrap, else `unshare` namespaces, else refused unless unsafe mode
is explicitly on), forking one clean child per call.

- `host`: isolation detection, launching and talking to the warm parents (`SandboxPool`).
- `worker`: runs inside the sandbox (standard library at import; the analysis stack in `preload`).
- `seccomp`, `nsroot`, `protocol`: the filter, the unshare filesystem view, the message framing.

Standard library only at import time; no web or agent imports.
"""

from sandbox.host import (Isolation, LaunchSpec, Limits, RunOutcome, SandboxPool, SandboxUnavailable,
                          detect_isolation, get_pool)

__all__ = ["Isolation", "LaunchSpec", "Limits", "RunOutcome", "SandboxPool", "SandboxUnavailable",
           "detect_isolation", "get_pool"]
