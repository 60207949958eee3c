"""The repository stands on its own: a clone has no folder beside it, so no test, task file,
benchmark or module may read one. The reference values and the R datasets live in data/reference/,
the spreadsheet corpus in tests/data/corpus/ (each with its README and licences), and the task
files name them relative to the repository root."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Where a file could name a place outside the repository. Folders the tools make or install into
# (caches, virtual environments, the app's runtime data) are not part of the tree.
ROOTS = ("app", "analysis_tools", "sandbox", "tests", "data", "bench", "templates", "static", ".ci")
TOP_FILES = ("README.md", "pyproject.toml", "Dockerfile", "docker-compose.yml", ".dockerignore", ".gitignore")
TEXT_SUFFIXES = {".py", ".json", ".md", ".toml", ".txt", ".yml", ".yaml", ".cfg", ".ini", ".sh", ".html", ".mako"}
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "runtime"}
# A folder beside the repository, however it is spelt: a relative path up and into it, its name
# joined onto a parent path (pathlib's `/` after `.parent`, `.parents[n]` or "..", os.path.join),
# or one of that folder's sub-folders named as a path. The app's own report links, the URL route
# `/shared/{secret}`, match none of these.
OUTSIDE = re.compile(
    r"\.\.[/\\]+shared\b"
    r"|(?:parent|parents\[\d+\]|\.\.)\W{0,6}[\"']shared[\"']"
    r"|join\([^)\n]*[\"']shared[\"']"
    r"|\bshared[/\\]+(?:reference|corpus|seeds|hooks|tools|SPEC|DESIGN|CONTRACT)\b"
)


def tree_text_files() -> list[Path]:
    files = [REPO / name for name in TOP_FILES if (REPO / name).is_file()]
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*")):
            parts = path.relative_to(REPO).parts
            if any(p in SKIPPED_DIRS or p.endswith(".egg-info") for p in parts[:-1]):
                continue
            if path.is_file() and (path.suffix in TEXT_SUFFIXES or (root == ".ci" and not path.suffix)):
                files.append(path)
    return files


def test_no_file_names_a_folder_outside_the_repository():
    files = tree_text_files()
    assert len(files) > 300  # the walk found the tree (tests, app, data/eval ...)
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:140]}")
    assert not found, "files that read a folder beside the repository:\n" + "\n".join(found)


def test_the_pattern_finds_each_way_of_naming_the_folder_and_not_the_report_route():
    folder = "sha" + "red"  # spelt in two here, so that this file does not name it
    assert all(
        OUTSIDE.search(text)
        for text in (
            f"../{folder}/reference/rdatasets/mtcars.csv",
            f'REPO.parent / "{folder}" / "reference"',
            f"Path(__file__).resolve().parents[2] / '{folder}'",
            f"os.path.join(ROOT, '..', '{folder}')",
            f"the R datasets in `{folder}/reference/rdatasets`",
            f"{folder}\\corpus\\calamine",
        )
    )
    assert not any(
        OUTSIDE.search(text)
        for text in ('SHARED_PREFIX = "/shared/"', "`GET /shared/{secret}`", 'PUBLIC_PREFIXES = ("/shared/",)')
    )


def test_every_file_a_task_set_names_is_in_the_repository():
    """Task files name their data relative to the repository root, inside it."""
    sets = sorted((REPO / "data" / "eval").glob("*.json"))
    named = {name for path in sets if path.name != "baseline.json" for name in task_files(path)}
    assert len(named) > 40
    outside = sorted(n for n in named if not (REPO / n).resolve().is_relative_to(REPO.resolve()))
    missing = sorted(n for n in named if not (REPO / n).is_file())
    assert not outside and not missing, f"outside the repository: {outside}; missing: {missing}"


def task_files(path: Path) -> set[str]:
    return {name for task in json.loads(path.read_text(encoding="utf-8"))["tasks"] for name in task["files"]}


def test_the_reference_data_and_corpus_are_in_the_repository_with_their_licences():
    from tests.factories import CORPUS, REFERENCE

    assert REFERENCE == REPO / "data" / "reference" and CORPUS == REPO / "tests" / "data" / "corpus"
    for folder in (REFERENCE, CORPUS):
        assert (folder / "README.md").is_file()
    for licence in ("calamine/LICENSE-calamine.txt", "tablib/LICENSE-tablib.txt"):  # messytables ships none
        assert (CORPUS / licence).is_file(), licence
    assert (REFERENCE / "nist" / "linreg" / "LICENSE-NISTTests.jl.txt").is_file()
    # every data file is listed in its folder's README by name or by its group's folder
    for folder in (REFERENCE, CORPUS):
        readme = (folder / "README.md").read_text(encoding="utf-8")
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            assert f"{sub.name}/" in readme, (
                f"{folder.relative_to(REPO)}/README.md does not say where {sub.name}/ is from"
            )
