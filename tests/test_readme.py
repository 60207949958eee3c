"""The README's first steps as a new user follows them (issue 28 point 7): the virtual environment is made
before the commands that install into it, the port option is there, and the examples that write files
write them where the checkout stays clean (an absolute path, or a folder git ignores)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_venv_comes_before_the_commands_it_applies_to() -> None:
    venv = README.index("-m venv")
    first_command = min(README.index(word) for word in ("pip install", "verity serve", "verity analyze"))
    assert venv < first_command, README[first_command - 200 : first_command + 80]


def test_the_port_option_is_named() -> None:
    assert re.search(r"verity serve --port \d+", README)


def test_examples_that_write_files_leave_the_checkout_clean() -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    outs = re.findall(r"--out\s+(\S+)", README)
    assert outs, "no example names --out"
    for out in outs:
        if out.startswith(("/", "~", "$")) or out in ("DIR", "FOLDER", "PATH"):
            continue
        ignored = subprocess.run(["git", "check-ignore", "-q", out], cwd=REPO, check=False)
        assert ignored.returncode == 0, f"--out {out} would leave an untracked folder in the checkout"
    # analyze's default folder too: the README says git ignores it
    default = subprocess.run(["git", "check-ignore", "-q", "verity-report/"], cwd=REPO, check=False)
    assert default.returncode == 0
