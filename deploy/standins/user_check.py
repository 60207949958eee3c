"""A user's walk through a running deployment (docker-compose.yml, behind its proxy), as recorded in RUN.md.

    python deploy/standins/user_check.py [--base http://localhost:8000] [--email E --password P]

Signs up through the /signup form (or signs in, when the account exists), as a browser would, with the
session cookie: makes a workspace, uploads data/samples/retail_sales.xlsx, asks "Does revenue differ by
region?", follows the run's event stream to its end, reads the run, opens the workspace page, and
downloads the report as HTML, PDF and zip, counting the figures in each; then asks for "Check every
number" (the app server re-runs analysis.py in its sandbox) and waits for the verdict. Prints each step
with its time and a final summary line (JSON), and exits 1 when a step fails.

--ask-only stops after the question is asked and prints the run's id (for the worker-kill check);
--follow RUN_ID WS_ID picks up such a run again: follows it to its end and reads its answer.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "samples" / "retail_sales.xlsx"
QUESTION = "Does revenue differ by region?"


class Walk:
    """The steps, each timed and checked; the first failure ends the walk."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.summary: dict[str, Any] = {}
        self.started = time.perf_counter()

    def step(self, name: str, ok: bool, detail: str = "") -> None:
        elapsed = time.perf_counter() - self.started
        print(f"[{elapsed:7.1f}s] {'ok  ' if ok else 'FAIL'} {name} {detail}", flush=True)
        if not ok:
            print(json.dumps({**self.summary, "failed": name}), flush=True)
            sys.exit(1)


def sign_in(walk: Walk, email: str, password: str) -> None:
    """Sign up through the form; when the address is taken, sign in instead."""
    client = walk.client
    first = client.get("/", follow_redirects=False)
    walk.step("GET / before sign-in redirects to /login", first.status_code in (302, 303, 307), str(first.status_code))
    page = client.get("/signup")
    walk.step("GET /signup", page.status_code == 200, str(page.status_code))
    made = client.post("/signup", data={"email": email, "password": password, "name": "Deploy check"})
    if made.status_code != 303:
        made = client.post("/login", data={"email": email, "password": password})
    walk.step(
        "sign-up (or sign-in) sets a session", made.status_code == 303 and bool(client.cookies), str(made.status_code)
    )
    home = client.get("/")
    walk.step("GET / signed in", home.status_code == 200, str(home.status_code))


def follow(walk: Walk, run: str) -> dict[str, Any]:
    """Follow the run's event stream to run_finished (reconnecting if it breaks), then read the run."""
    finished = False
    events = 0
    for _ in range(20):
        try:
            with walk.client.stream("GET", f"/api/runs/{run}/events", timeout=httpx.Timeout(30, read=300)) as stream:
                for line in stream.iter_lines():
                    if line.startswith("event: "):
                        events += 1
                    if line.startswith("event: run_finished"):
                        finished = True
                        break
        except httpx.HTTPError as error:
            print(f"           event stream broke ({type(error).__name__}); reconnecting", flush=True)
            time.sleep(2)
        if finished:
            break
    walk.step("event stream reaches run_finished", finished, f"{events} events")
    result = walk.client.get(f"/api/runs/{run}").json()
    walk.summary.update(run=run, status=result["status"], answer=(result.get("answer") or "")[:300])
    walk.step("run done", result["status"] == "done", f"status={result['status']} error={result.get('error')}")
    return result


def reports(walk: Walk, ws: str, run: str) -> None:
    """The report in three formats, with its figures."""
    html = walk.client.get(f"/api/workspaces/{ws}/report.html", params={"run": run})
    images = len(re.findall(r"<img\b", html.text))
    walk.summary["html_images"] = images
    walk.step(
        "report.html with figures", html.status_code == 200 and images > 0, f"{len(html.content)} B, {images} <img>"
    )
    pdf = walk.client.get(f"/api/workspaces/{ws}/report.pdf", params={"run": run})
    pdf_images = pdf.content.count(b"/Subtype /Image") + pdf.content.count(b"/Subtype/Image")
    walk.summary["pdf_bytes"] = len(pdf.content)
    walk.step(
        "report.pdf",
        pdf.status_code == 200 and pdf.content.startswith(b"%PDF"),
        f"{len(pdf.content)} B, {pdf_images} image objects",
    )
    bundle = walk.client.get(f"/api/workspaces/{ws}/report.zip", params={"run": run})
    names = zipfile.ZipFile(io.BytesIO(bundle.content)).namelist() if bundle.status_code == 200 else []
    figures = [name for name in names if "/figures/" in name]
    walk.summary["zip_figures"] = len(figures)
    walk.step("report.zip with figures", bool(figures), f"{len(bundle.content)} B, members {names}")


def check_numbers(walk: Walk, ws: str, run: str) -> None:
    """'Check every number': the app server re-runs analysis.py in its sandbox; wait for the verdict."""
    started = walk.client.post(f"/runs/{run}/check-numbers", follow_redirects=False)
    walk.step("check every number started", started.status_code == 303, str(started.status_code))
    verdict = None
    for _ in range(90):  # a verdict goes into the report; a check that could not run says why on the page only
        verdict = walk.client.get(f"/api/workspaces/{ws}/report.json", params={"run": run}).json().get("reproduction")
        if verdict:
            break
        time.sleep(2)
    walk.summary["reproduction"] = verdict
    if not verdict:
        page = walk.client.get(f"/workspaces/{ws}", params={"run": run}).text
        at = page.find('id="reproduction"')
        shown = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page[at : at + 3000])) if at >= 0 else "(no section)"
        walk.summary["reproduction_page"] = shown[:500]
    walk.step("number check verdict", bool(verdict), json.dumps(verdict or walk.summary["reproduction_page"])[:500])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="http://localhost:8000")
    parser.add_argument("--email", default=f"check-{int(time.time())}@example.com")
    parser.add_argument("--password", default="deploy-check-password-1")
    parser.add_argument("--ask-only", action="store_true")
    parser.add_argument("--follow", nargs=2, metavar=("RUN_ID", "WS_ID"))
    parser.add_argument("--no-check", action="store_true", help="skip Check every number")
    args = parser.parse_args()
    with httpx.Client(base_url=args.base, timeout=120) as client:
        walk = Walk(client)
        sign_in(walk, args.email, args.password)
        if args.follow:
            run, ws = args.follow
            follow(walk, run)
            reports(walk, ws, run)
            print(json.dumps(walk.summary), flush=True)
            return
        made = client.post("/api/workspaces", json={"name": "deploy check"})
        walk.step("workspace made", made.status_code == 201, str(made.status_code))
        ws = made.json()["id"]
        walk.summary["workspace"] = ws
        with SAMPLE.open("rb") as handle:
            upload = client.post(f"/api/workspaces/{ws}/files", files={"file": (SAMPLE.name, handle)})
        walk.step("upload retail_sales.xlsx", upload.status_code == 201, f"{upload.status_code} {upload.text[:160]}")
        page = client.get(f"/workspaces/{ws}")
        walk.step("workspace page", page.status_code == 200 and "retail_sales" in page.text, str(page.status_code))
        asked = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION})
        walk.step("question asked", asked.status_code == 202, f"{asked.status_code} {asked.text[:160]}")
        run = asked.json()["run_id"]
        if args.ask_only:
            print(json.dumps({"run": run, "workspace": ws, "email": args.email}), flush=True)
            return
        follow(walk, run)
        shown = client.get(f"/workspaces/{ws}", params={"run": run})
        walk.step("workspace page shows the run", shown.status_code == 200, str(shown.status_code))
        reports(walk, ws, run)
        if not args.no_check:
            check_numbers(walk, ws, run)
        print(json.dumps(walk.summary), flush=True)


if __name__ == "__main__":
    main()
