"""Tables an analysis made (a group total stored under its own name) are shown as what they are:
their own name and origin, grouped after the user's uploads, without the file's sheet controls,
and removed alone. The table comes from a real run of the built-in analyst."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.db.models import Dataset
from tests.factories import SAMPLES, wait_for_run

pytestmark = pytest.mark.slow  # a server, a run or a child per test: handed out early (tests/conftest.py)

QUESTION = "Which region brings in the most total revenue?"


def workspace_with_a_derived_table(client) -> tuple[str, dict, dict, str]:
    """An upload of retail_sales.xlsx and the group table the built-in analyst keeps when asked
    which region brings in the most revenue: (workspace id, upload, derived table, run id)."""
    ws = client.post("/api/workspaces", json={"name": "Derived"}).json()["id"]
    with open(SAMPLES / "retail_sales.xlsx", "rb") as f:
        upload = client.post(f"/api/workspaces/{ws}/files", files={"file": ("retail_sales.xlsx", f)}).json()["dataset"]
    run_id = client.post(f"/api/workspaces/{ws}/messages", json={"text": QUESTION}).json()["run_id"]
    wait_for_run(client, run_id, {"done"})
    with client.app.state.db.session() as session:
        made = [
            d
            for d in session.scalars(select(Dataset).where(Dataset.workspace_id == ws, Dataset.active))
            if d.id != upload["id"]
        ]
    assert len(made) == 1, [d.name for d in made]  # the run stored exactly one table of its own
    derived = client.get(f"/api/workspaces/{ws}/datasets/{made[0].id}").json()["dataset"]
    return ws, upload, derived, run_id


def card(page: str, dataset_id: str) -> str:
    start = page.index(f'id="dataset-{dataset_id}"')
    return page[start : page.index("</article>", start)]


def test_a_derived_table_is_listed_after_the_uploads_under_its_own_name_and_origin(client):
    ws, upload, derived, run_id = workspace_with_a_derived_table(client)
    page = client.get(f"/workspaces/{ws}").text
    uploads_part, derived_part = page.split('id="derived-tables"', 1)
    # the upload keeps its card, above the section, as before
    assert f'id="dataset-{upload["id"]}"' in uploads_part and f'id="dataset-{derived["id"]}"' in derived_part
    mine = card(page, upload["id"])
    assert '<h3 class="dataset-title">retail_sales.xlsx</h3>' in mine and "Sheet: Orders 2024" in mine
    assert "Column names found in row 3" in mine and "Other sheets in this file" in mine
    assert "Remove this file…" in mine and '<details class="preview" open>' in mine
    # the section is closed and counts its tables
    assert '<details class="derived-tables" id="derived-tables">' in page
    assert "Tables made by analyses (1)" in derived_part
    made = card(page, derived["id"])
    assert derived["name"] != "retail_sales" and f'<h3 class="dataset-title">{derived["name"]}</h3>' in made
    assert "Made from retail_sales.xlsx by the step “Summarising by group”" in made
    assert f"?run={run_id}#run" in made and QUESTION in made  # the question that made it, linked
    assert f"{derived['rows']} rows" in made and f"{len(derived['columns'])} columns" in made
    # none of the parent file's reading: no sheet, header row or sheet switch; its rows stay closed
    for inherited in (
        "Sheet:",
        "Column names found in row",
        "Other sheets in this file",
        '/sheet"',
        "retail_sales.xlsx</h3>",
    ):
        assert inherited not in made, inherited
    assert "Remove this table…" in made and "Remove this file…" not in made
    assert '<details class="preview" >' in made and "<table" in made


def test_the_derived_section_reads_in_chinese(client):
    ws, _, derived, _ = workspace_with_a_derived_table(client)
    page = client.get(f"/workspaces/{ws}?lang=zh").text
    assert "分析生成的表（1）" in page and "由 retail_sales.xlsx 经“分组汇总”步骤生成" in page
    assert "来自问题：" in page and "删除此表…" in card(page, derived["id"])


def test_the_api_says_where_a_table_came_from_and_refuses_file_actions_on_it(client):
    ws, upload, derived, run_id = workspace_with_a_derived_table(client)
    assert derived["derived_from"] == {
        "source": "retail_sales.xlsx",
        "dataset": "retail_sales",
        "tool": "group_aggregate",
        "step": derived["derived_from"]["step"],
        "run_id": run_id,
        "question": QUESTION,
    }
    assert "Revenue" in derived["derived_from"]["step"] and "Region" in derived["derived_from"]["step"]
    assert "sheets" not in derived and "header_row" not in derived  # the file's reading is not the table's
    assert upload["sheets"] and "header_row" in upload
    assert client.get(f"/api/workspaces/{ws}/datasets/{upload['id']}").json()["dataset"]["derived_from"] is None
    # another sheet of the file is still a version of the upload, not a derived table
    switched = client.post(f"/api/workspaces/{ws}/datasets/{upload['id']}/sheet", json={"sheet": "Notes"})
    assert (
        client.get(f"/api/workspaces/{ws}/datasets/{switched.json()['dataset']['id']}").json()["dataset"][
            "derived_from"
        ]
        is None
    )
    # reading a sheet of the file again would put the file's rows under the table's name
    refused = client.post(f"/api/workspaces/{ws}/datasets/{derived['id']}/sheet", json={"sheet": "Notes"})
    assert refused.status_code == 409 and refused.json()["error"]["category"] == "derived_table"


def test_removing_a_derived_table_takes_only_that_table(client):
    ws, upload, derived, _ = workspace_with_a_derived_table(client)
    with client.app.state.db.session() as session:
        original = client.app.state.settings.data_dir / session.get(Dataset, upload["id"]).original_path
        copy = client.app.state.settings.data_dir / session.get(Dataset, derived["id"]).working_path
    assert copy.exists() and copy.parent == original.parent
    asked = client.post(f"/workspaces/{ws}/datasets/{derived['id']}/remove")
    assert asked.status_code == 200 and f"Remove the table {derived['name']} from this workspace?" in asked.text
    assert (
        "only this table" in asked.text and "retail_sales.xlsx" not in asked.text.split("<h1>", 1)[1].split("</h1>")[0]
    )
    api_asked = client.delete(f"/api/workspaces/{ws}/datasets/{derived['id']}")
    assert api_asked.status_code == 409 and derived["name"] in api_asked.json()["error"]["message"]
    done = client.delete(f"/api/workspaces/{ws}/datasets/{derived['id']}?confirm=true")
    assert done.status_code == 200 and done.json() == {"removed": [derived["name"]]}
    assert not copy.exists() and original.exists()  # the upload's file and folder stay
    assert client.get(f"/api/workspaces/{ws}/datasets/{upload['id']}").status_code == 200
    page = client.get(f"/workspaces/{ws}").text
    assert 'id="derived-tables"' not in page and f'id="dataset-{upload["id"]}"' in page


def test_suggestions_leave_out_a_derived_table_after_its_file_switched_sheet(client):
    """The derived table keeps the sheet it was made from; once the upload reads another sheet, only
    the lineage (not a shared file and sheet) still tells the table from an upload."""
    import re

    ws, upload, _, _ = workspace_with_a_derived_table(client)
    client.post(f"/api/workspaces/{ws}/datasets/{upload['id']}/sheet", json={"sheet": "Notes"})
    suggestions = re.findall(r'class="suggestion">([^<]+)<', client.get(f"/workspaces/{ws}").text)
    assert not [q for q in suggestions if "Revenue_sum" in q or "n_rows" in q], suggestions
