"""No single request or call freezes the server (issue 25, point 1): a real `verity serve` process,
its model an OpenAI-compatible endpoint scripted here, takes the round's hostile inputs while
/healthz is asked again and again, and every probe answers within a second.

The inputs: a ~100 KB CSV whose header is 100,000 letters, previewed by the model; run_python's
`print("A"*45000)`; a call that forges a 60 MB reply on its result pipe. Before, the personal-data
masker (app/agent/policy/privacy.py) held the GIL on the first two for minutes and 18 s (175 of 193
probes unanswered), and the forged reply was read, parsed and masked whole (more than 4.5 minutes)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes import FakeOpenAIServer, completion
from tests.test_sandbox_bounds import FORGE

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
BOUND_S = 1.0  # the bound for every probe
PROBE_TIMEOUT_S = 5.0  # a probe unanswered this long has failed; the test stops there
PROBE_EVERY_S = 0.1
HEADER = "A" * 100_000

# The model's one call for each question (a word of the question picks it); after the call's result
# it answers "done". Requests without tools (the message's classification) get a plain reply.
ATTACKS = {
    "attack-header": ("preview_data", {"rows": 3}),
    "attack-print": ("run_python", {"code": 'print("A" * 45000)'}),
    "attack-forge": (
        "run_python",
        {"code": FORGE + 'forge(json.dumps({"ok": True, "stdout": {"text": "A" * 60_000_000}}).encode())'},
    ),
    "warm-up": ("preview_data", {"rows": 3}),
}


def respond(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    if not body.get("tools"):
        return completion("done")
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    if any(m["role"] == "tool" for m in messages[last_user:]):
        return completion("done")
    question = json.dumps(messages[last_user]["content"])
    for word, (tool, arguments) in ATTACKS.items():
        if word in question:
            return completion(None, [{"id": "c1", "name": tool, "arguments": json.dumps(arguments)}])
    return completion("done")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(respond) as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory, llm) -> Iterator[tuple[str, Path]]:
    """`verity serve` in a process (and session) of its own, its model the scripted endpoint: its
    address and its data folder."""
    port = free_port()
    data_dir = tmp_path_factory.mktemp("serve")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "VERITY_DATA_DIR": str(data_dir),
        "VERITY_LLM_BASE_URL": llm.base_url,
        "VERITY_LLM_API_KEY": "test-key",
        "VERITY_LLM_MODEL": "scripted",
        "VERITY_RUN_WORKERS": "3",  # the three attacks at once
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its sandboxes with it, stopped together below
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        yield base, data_dir
    finally:
        process.terminate()  # a server frozen in the old masker never runs its signal handler
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


class Probe(threading.Thread):
    """GET /healthz on a new connection every PROBE_EVERY_S until stopped; the seconds each took (a
    probe that timed out counts as PROBE_TIMEOUT_S)."""

    def __init__(self, base: str):
        super().__init__(daemon=True)
        self.base, self.stop, self.latencies = base, threading.Event(), []
        self.timed_out = threading.Event()

    def run(self) -> None:
        host, port = self.base.removeprefix("http://").split(":")
        while not self.stop.is_set():
            started = time.monotonic()
            connection = http.client.HTTPConnection(
                host, int(port), timeout=PROBE_TIMEOUT_S
            )  # as little client work as can be
            try:
                connection.request("GET", "/healthz")
                answered: int | None = connection.getresponse().status
            except OSError:  # timed out
                answered = None
            finally:
                connection.close()
            took = time.monotonic() - started
            self.latencies.append(took if answered == 200 else max(took, PROBE_TIMEOUT_S))
            if answered != 200:
                self.timed_out.set()
            self.stop.wait(max(0.0, PROBE_EVERY_S - took))

    def report(self) -> str:
        worst = max(self.latencies)
        slow = sum(t >= BOUND_S for t in self.latencies)
        return f"worst /healthz {worst:.3f} s; {slow} of {len(self.latencies)} probes at {BOUND_S} s or more"


def csv_with_a_long_header() -> bytes:
    """~100 KB: a header of 100,000 letters (and an e-mail column, so the masker has work)."""
    rows = "".join(f"{n},person{n}@mail.example.com\n" for n in range(20))
    return f"{HEADER},mail\n{rows}".encode()


def ask(client: httpx.Client, workspace: str, text: str) -> str:
    answer = client.post(f"/api/workspaces/{workspace}/messages", json={"text": text})
    assert answer.status_code == 202, answer.text
    return answer.json()["run_id"]


def wait_for(client: httpx.Client, run_ids: list[str], until: float, give_up: threading.Event | None = None) -> dict:
    statuses: dict[str, str] = {}
    while time.monotonic() < until and not (give_up is not None and give_up.is_set()):
        for run_id in run_ids:
            if statuses.get(run_id) not in ("done", "failed", "interrupted"):
                try:
                    statuses[run_id] = client.get(f"/api/runs/{run_id}").json()["status"]
                except httpx.TimeoutException:
                    pass
        if all(statuses.get(r) in ("done", "failed", "interrupted") for r in run_ids):
            break
        time.sleep(0.2)
    return statuses


def tool_results(llm: FakeOpenAIServer, word: str) -> list[str]:
    """What the model was shown of its call's result, in the runs whose question names `word`."""
    return [
        str(m["content"])
        for request in list(llm.requests)
        if any(word in json.dumps(m.get("content")) for m in request["messages"] if m["role"] == "user")
        for m in request["messages"]
        if m["role"] == "tool"
    ]


def test_healthz_answers_within_a_second_while_the_attacks_run(server, llm):
    base, data_dir = server
    client = httpx.Client(base_url=base, trust_env=False, timeout=PROBE_TIMEOUT_S * 6)
    # A first question on ordinary data: what every server does once (the tokenizers' and word
    # lists' first loads) is not what is measured here.
    calm = client.post("/api/workspaces", json={"name": "calm"}).json()["id"]
    sample = b"region,amount\n" + b"".join(f"r{n % 3},{n}\n".encode() for n in range(30))
    assert client.post(f"/api/workspaces/{calm}/files", files={"file": ("calm.csv", sample, "text/csv")}).is_success
    warm = ask(client, calm, "warm-up: what is in the data?")
    assert wait_for(client, [warm], time.monotonic() + 120)[warm] == "done"

    probe = Probe(base)
    probe.start()
    try:
        workspace = client.post("/api/workspaces", json={"name": "attacked"}).json()["id"]
        upload = client.post(
            f"/api/workspaces/{workspace}/files", files={"file": ("wide.csv", csv_with_a_long_header(), "text/csv")}
        )
        assert upload.status_code == 201, upload.text[:500]
        runs = [ask(client, workspace, f"{word}: what is in the data?") for word in ATTACKS if word != "warm-up"]
        statuses = wait_for(client, runs, time.monotonic() + 150, give_up=probe.timed_out)
        time.sleep(0.5)  # a probe or two after the last run ended
    finally:
        probe.stop.set()
        probe.join(PROBE_TIMEOUT_S * 2)
    print(probe.report())
    assert max(probe.latencies) < BOUND_S, probe.report()
    assert all(status == "done" for status in statuses.values()), (statuses, probe.report())
    # the attacks went through: the model was shown the header and the flood, and the forged reply refused
    assert any("AAAAAAAAAA" in shown for shown in tool_results(llm, "attack-header")), "the preview never came back"
    assert any("A" * 1000 in shown for shown in tool_results(llm, "attack-print")), "the printed output never came back"
    assert any("limit_exceeded" in shown for shown in tool_results(llm, "attack-forge")), tool_results(
        llm, "attack-forge"
    )
    # point 2: the database holds the bounded output, never the forged 60 MB (before: 63 MB and a
    # 64 MB write-ahead log from the one call)
    stored = sum(path.stat().st_size for path in data_dir.glob("verity.db*"))
    assert stored < 16 * 1024 * 1024, f"the database and its log hold {stored:,} bytes"
