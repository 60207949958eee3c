"""What the sandbox binds of the interpreter (sandbox/launch.py _python_paths), for interpreters installed
under a system prefix, where the prefix itself is never bound whole.

Found by running docker-compose.yml (issue 26): in the image, whose Python lives under /usr/local, nothing
of the interpreter was bound (the prefix was dropped after its own files had been skipped as "inside it"),
so every run_python call and every "Check every number" failed with `bwrap: execvp ...: No such file or
directory`, while the start-up probe (which binds /) said "sandboxed (bwrap)".
"""

from __future__ import annotations

import sys
import sysconfig

import pytest

from sandbox import launch


def layout(
    monkeypatch: pytest.MonkeyPatch,
    *,
    executable: str,
    prefix: str,
    base_prefix: str,
    paths: dict[str, str],
    config: dict[str, object],
    files: set[str],
) -> None:
    """Pretend to be an interpreter laid out as given (paths that need not exist on this machine)."""
    monkeypatch.setattr(sys, "executable", executable)
    monkeypatch.setattr(sys, "prefix", prefix)
    monkeypatch.setattr(sys, "exec_prefix", prefix)
    monkeypatch.setattr(sys, "base_prefix", base_prefix)
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: dict(paths))
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: config.get(name))
    monkeypatch.setattr(launch.os.path, "realpath", lambda p: str(p))
    monkeypatch.setattr(launch.os.path, "isdir", lambda p: str(p) in files or str(p) in ("/usr/lib", "/lib"))
    monkeypatch.setattr(launch.os.path, "isfile", lambda p: str(p) in files)
    monkeypatch.setattr(launch.os.path, "islink", lambda p: False)
    monkeypatch.setattr(launch, "_system_site_packages", list)


def test_the_official_python_image_binds_its_interpreter_library_and_libpython(monkeypatch):
    """python:3.11-slim: a --enable-shared build in /usr/local, libpython found by the $ORIGIN/../lib run path."""
    layout(
        monkeypatch,
        executable="/usr/local/bin/python3.11",
        prefix="/usr/local",
        base_prefix="/usr/local",
        paths={
            "stdlib": "/usr/local/lib/python3.11",
            "platstdlib": "/usr/local/lib/python3.11",
            "purelib": "/usr/local/lib/python3.11/site-packages",
            "platlib": "/usr/local/lib/python3.11/site-packages",
        },
        config={"Py_ENABLE_SHARED": 1, "LIBDIR": "/usr/local/lib", "INSTSONAME": "libpython3.11.so.1.0"},
        files={"/usr/local/lib/python3.11/lib-dynload", "/usr/local/lib/libpython3.11.so.1.0"},
    )
    executable, bound, site = launch._python_paths()
    assert executable == "/usr/local/bin/python3.11"
    assert bound == ["/usr/local/bin/python3.11", "/usr/local/lib/libpython3.11.so.1.0", "/usr/local/lib/python3.11"]
    assert site == ["/usr/local/lib/python3.11/site-packages"]


def test_a_virtualenv_on_the_system_python_binds_the_executable_alone_never_usr_bin(monkeypatch):
    """A venv at /usr/local on Debian's /usr/bin/python3.11 (the stand-in image of deploy/standins)."""
    layout(
        monkeypatch,
        executable="/usr/bin/python3.11",
        prefix="/usr/local",
        base_prefix="/usr",
        paths={
            "stdlib": "/usr/lib/python3.11",
            "platstdlib": "/usr/local/lib/python3.11",
            "purelib": "/usr/local/lib/python3.11/site-packages",
            "platlib": "/usr/local/lib/python3.11/site-packages",
        },
        config={"Py_ENABLE_SHARED": 0},
        files=set(),
    )
    _, bound, _ = launch._python_paths()
    assert bound == ["/usr/bin/python3.11", "/usr/local/lib/python3.11"]  # /usr/lib is bound for every sandbox
    assert not {"/", "/usr", "/usr/bin", "/usr/local", "/usr/local/bin"} & set(bound)


def test_an_interpreter_under_its_own_prefix_is_bound_by_that_prefix(monkeypatch):
    """pyenv, a venv under /srv: the prefix is the interpreter's own, bound whole as before."""
    layout(
        monkeypatch,
        executable="/root/.pyenv/versions/3.11.7/bin/python3.11",
        prefix="/root/.pyenv/versions/3.11.7",
        base_prefix="/root/.pyenv/versions/3.11.7",
        paths={
            "stdlib": "/root/.pyenv/versions/3.11.7/lib/python3.11",
            "platstdlib": "/root/.pyenv/versions/3.11.7/lib/python3.11",
            "purelib": "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages",
            "platlib": "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages",
        },
        config={
            "Py_ENABLE_SHARED": 1,
            "LIBDIR": "/root/.pyenv/versions/3.11.7/lib",
            "INSTSONAME": "libpython3.11.so.1.0",
        },
        files={"/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"},
    )
    _, bound, _ = launch._python_paths()
    assert bound == ["/root/.pyenv/versions/3.11.7"]
