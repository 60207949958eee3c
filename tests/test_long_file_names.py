"""A file name longer than the file system allows (255 bytes) is stored under a shortened name that
keeps its extension, and shown as it was given (issue 25): data uploads from the API and the page,
and reference documents; before, each was a 500 (OSError ENAMETOOLONG)."""

from __future__ import annotations

from pathlib import Path

from app.workspaces import stored_file_name
from tests.conftest import sample_path

LONG_STEM = "销售" * 60 + "_" + "q" * 200  # 360 + 201 bytes in UTF-8


def test_a_stored_name_fits_and_keeps_its_extension():
    name = LONG_STEM + ".csv"
    stored = stored_file_name(name)
    assert len(stored.encode()) <= 255 and stored.endswith(".csv") and stored.startswith("销售")
    assert stored_file_name("sales.csv") == "sales.csv"  # a name that fits is kept as it is
    # an "extension" too long to be one is not kept whole (the name still fits)
    odd = stored_file_name("a." + "x" * 400)
    assert len(odd.encode()) <= 255
    # never a half character
    stored.encode().decode("utf-8")


def test_a_data_upload_with_a_long_name_is_stored_and_shown_by_its_name(client):
    name = LONG_STEM + ".xlsx"
    ws = client.post("/api/workspaces", json={"name": "long"}).json()["id"]
    response = client.post(
        f"/api/workspaces/{ws}/files", files={"file": (name, sample_path("retail_sales.xlsx").read_bytes())}
    )
    assert response.status_code == 201, response.text[:500]
    dataset = response.json()["dataset"]
    assert dataset["file"] == name  # shown as given
    page = client.get(f"/workspaces/{ws}")
    assert page.status_code == 200 and "销售销售" in page.text
    # and from the page's form
    form = client.post(
        f"/workspaces/{ws}/upload", files={"file": (name, sample_path("retail_sales.xlsx").read_bytes())}
    )
    assert form.status_code in (200, 303), form.text[:500]


def test_a_document_with_a_long_name_is_kept(client):
    name = LONG_STEM + ".md"
    ws = client.post("/api/workspaces", json={"name": "doc"}).json()["id"]
    response = client.post(
        f"/api/workspaces/{ws}/knowledge/files", files={"file": (name, b"# Policy\n\nRevenue is net of VAT.")}
    )
    assert response.status_code == 201, response.text[:500]
    assert response.json()["source"] == name and response.json()["title"].startswith("销售")


def test_names_that_fit_are_stored_as_they_are(tmp_path):
    assert Path(stored_file_name("报告 2024.xlsx")).suffix == ".xlsx"
