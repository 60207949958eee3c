"""Isolated execution for run_python: a warm, pre-imported parent per workspace inside an
operating-system sandbox (bubblewrap, else `unshare` namespaces, else refused unless unsafe mode
is explicitly on), forking one clean child per call.

What holds, and why (each point has an attack in tests/test_sandbox_escape.py, in both modes):
- a call cannot signal, trace or write to the parent, the zygote or init: with a root host its code
  runs as the workspace's *call user*, the parent as the *parent user* (`caps`); without root (one
  uid in a user namespace) each call is init of a pid namespace of its own, where they do not exist
  (`worker_parent.enter_call_namespace`);
- nothing outlives a call: the parent kills every other process of the sandbox's pid namespace
  when the call returns, and says how many there were;
- the writable places (/scratch, /tmp) are size-limited file systems in memory, emptied after
  every call; the host reaches them only through descriptors opened with O_NOFOLLOW, so a symlink
  planted by a call is never followed (`results`, `procs`);
- every reply is matched to its call: a crashed parent is reported as a crash, never as output;
- at most `max_warm` sandboxes and `memory_mb` of memory stay warm (`pool`).

- `host`: limits, isolation detection, and the public names of the host side (re-exported from
  `launch`: the bwrap/unshare command and mounts; `pool`: `SandboxPool`; `warm`: one sandbox,
  `WarmParent`; `results`: `RunOutcome`, copying outputs out and emptying the scratch; `procs`:
  the sandbox's root folder and memory, from /proc).
- `worker`: runs inside the sandbox (standard library at import; the analysis stack in `preload`):
  the fork loop; `worker_parent` (one call), `worker_child` (limits, capture, artefacts) and
  `worker_errors` (error texts and hints); `caps` (users and capabilities).
- `seccomp`, `nsroot`, `protocol`: the filter, the unshare filesystem view, the message framing.

Standard library only at import time; no web or agent imports.
"""

from sandbox.host import Isolation, Limits, SandboxUnavailable, detect_isolation
from sandbox.launch import LaunchSpec
from sandbox.pool import SandboxPool, get_pool
from sandbox.results import RunOutcome

__all__ = [
    "Isolation",
    "LaunchSpec",
    "Limits",
    "RunOutcome",
    "SandboxPool",
    "SandboxUnavailable",
    "detect_isolation",
    "get_pool",
]
