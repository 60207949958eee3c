"""Switching sheets, going back to earlier versions and removing a file, from the page, the API and the agent."""

from sqlalchemy import select

from app.agent.model.interface import ModelReply
from app.db.models import Dataset
from app.workspaces import active_datasets
from tests.factories import SAMPLES, setup, start_run
from tests.fakes import ScriptedModel, call


def upload(client, name="Sheets"):
    ws = client.post("/api/workspaces", json={"name": name}).json()["id"]
    with open(SAMPLES / "retail_sales.xlsx", "rb") as f:
        dataset = client.post(f"/api/workspaces/{ws}/files", files={"file": ("retail_sales.xlsx", f)}).json()["dataset"]
    return ws, dataset


def test_switch_sheet_and_go_back_through_the_api(client):
    ws, dataset = upload(client)
    assert dataset["selected_sheet"] == "Orders 2024"
    switched = client.post(f"/api/workspaces/{ws}/datasets/{dataset['id']}/sheet", json={"sheet": "Notes"})
    assert switched.status_code == 201 and switched.json()["dataset"]["selected_sheet"] == "Notes"
    versions = client.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}/versions").json()["versions"]
    assert [(v["version"], v["active"], v["sheet"]) for v in versions] == [
        (1, False, "Orders 2024"),
        (2, True, "Notes"),
    ]
    back = client.post(f"/api/workspaces/{ws}/datasets/{dataset['id']}/activate").json()["versions"]
    assert [v["active"] for v in back] == [True, False]
    missing = client.post(f"/api/workspaces/{ws}/datasets/{dataset['id']}/sheet", json={"sheet": "Nope"})
    assert missing.status_code == 400 and missing.json()["error"]["category"] == "no_table_found"


def test_switch_sheet_from_the_page(client):
    ws, dataset = upload(client, "Page")
    page = client.get(f"/workspaces/{ws}").text
    assert "Notes (2" in page  # the other sheet is offered
    done = client.post(
        f"/workspaces/{ws}/datasets/{dataset['id']}/sheet", data={"sheet": "Notes"}, follow_redirects=True
    )
    assert done.status_code == 200 and "Go back to this version" in done.text


def test_removing_a_file_needs_a_confirmation_and_takes_every_version(client, settings):
    ws, dataset = upload(client, "Remove")
    client.post(f"/api/workspaces/{ws}/datasets/{dataset['id']}/sheet", json={"sheet": "Notes"})
    with client.app.state.db.session() as session:
        folder = (settings.data_dir / session.get(Dataset, dataset["id"]).original_path).parent
    assert len(list(folder.iterdir())) == 3  # the original and two working copies
    asked = client.delete(f"/api/workspaces/{ws}/datasets/{dataset['id']}")
    assert asked.status_code == 409 and asked.json()["error"]["category"] == "confirmation_required"
    assert folder.exists()
    # the page asks first, and says what will go
    page = client.post(f"/workspaces/{ws}/datasets/{dataset['id']}/remove")
    assert page.status_code == 200 and "Remove retail_sales.xlsx from this workspace?" in page.text
    assert 'name="confirm" value="yes"' in page.text and "retail_sales" in page.text and folder.exists()
    done = client.delete(f"/api/workspaces/{ws}/datasets/{dataset['id']}?confirm=true")
    assert done.status_code == 200 and done.json() == {"removed": ["retail_sales"]}
    assert not folder.exists()
    with client.app.state.db.session() as session:
        assert not session.scalars(select(Dataset).where(Dataset.workspace_id == ws)).all()
    assert "retail_sales.xlsx" not in client.get(f"/workspaces/{ws}").text
    assert client.delete(f"/api/workspaces/{ws}/datasets/{dataset['id']}?confirm=true").status_code == 404


def test_removing_from_the_page_after_confirming(client):
    ws, dataset = upload(client, "Remove page")
    removed = client.post(
        f"/workspaces/{ws}/datasets/{dataset['id']}/remove", data={"confirm": "yes"}, follow_redirects=False
    )
    assert removed.status_code == 303
    assert client.get(f"/api/workspaces/{ws}/datasets/{dataset['id']}").status_code == 404


def test_the_agent_can_select_a_sheet(tmp_path):
    model = ScriptedModel(
        [
            ModelReply(None, [call("select_sheet", "c1", sheet="Notes")]),
            ModelReply(None, [call("preview_data", "c2")]),
            ModelReply("ok"),
        ]
    )
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx", lambda *_: model)
    service.execute(start_run(service, ws, "use the notes sheet"))
    assert "[dataset]" in model.requests[1]["messages"][-1]["content"]
    preview = model.requests[2]["messages"][-1]["content"]
    assert "Order ID" not in preview  # the preview now reads the Notes sheet
    with db.session() as s:
        [current] = active_datasets(s, ws)
        assert current.sheet == "Notes" and current.version == 2
        assert len(list(s.scalars(select(Dataset)))) == 2


def test_the_agent_can_look_at_a_sheet_without_leaving_its_table(tmp_path):
    """A notes sheet read for its definitions (model feedback, stop 44): select_sheet(preview=True) shows
    its rows and the analysis table stays the sheet it was."""
    model = ScriptedModel(
        [
            ModelReply(None, [call("select_sheet", "c1", sheet="Notes", preview=True)]),
            ModelReply(None, [call("preview_data", "c2")]),
            ModelReply("ok"),
        ]
    )
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx", lambda *_: model)
    service.execute(start_run(service, ws, "read the notes sheet"))
    looked = model.requests[1]["messages"][-1]["content"]
    assert "Revenue = Units x Unit Price" in looked and "not selected" in looked
    assert "Order ID" in model.requests[2]["messages"][-1]["content"]  # the preview still reads the orders
    with db.session() as s:
        [current] = active_datasets(s, ws)
        assert current.sheet == "Orders 2024" and current.version == 1


def test_the_agent_cannot_select_a_sheet_of_a_table_an_analysis_made(tmp_path):
    """A derived table's file is its upload's; reading a sheet of it under the table's name would swap
    the table for the upload's rows (the web routes refuse it too)."""
    import pandas as pd

    from app.workspaces import add_version

    model = ScriptedModel(
        [ModelReply(None, [call("select_sheet", "c1", sheet="Notes", dataset="region_totals")]), ModelReply("ok")]
    )
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx", lambda *_: model)
    with db.session() as s:
        [upload] = active_datasets(s, ws)
        add_version(
            s,
            settings,
            upload,
            pd.DataFrame({"Region": ["East"], "Revenue": [1.0]}),
            "tool: group_aggregate",
            "region_totals",
        )
    service.execute(start_run(service, ws, "use the notes sheet of region_totals"))
    reply = model.requests[1]["messages"][-1]["content"]
    assert "derived_table" in reply and "'retail_sales'" in reply  # points to the upload it came from
    with db.session() as s:
        table = next(d for d in active_datasets(s, ws) if d.name == "region_totals")
        assert table.version == 1 and table.rows == 1


def test_two_sheets_of_one_workbook_are_two_named_tables_not_a_duplicate(client, tmp_path):
    """Uploading a workbook's second sheet (issue 28): not "exactly the same content" as the first
    upload, and each table is named by its sheet on the page and for the analyst."""
    from openpyxl import Workbook

    book = Workbook()
    first = book.active
    first.title = "一月"
    second = book.create_sheet("二月")
    for sheet, base in ((first, 100), (second, 200)):
        sheet.append(["门店", "销售额"])
        for n, shop in enumerate(["东门", "西门", "南门"] * 4):
            sheet.append([shop, base + n])
    path = tmp_path / "门店.xlsx"
    book.save(path)
    ws = client.post("/api/workspaces", json={"name": "两个月"}).json()["id"]
    names = []
    for sheet in (None, "二月"):
        with open(path, "rb") as f:
            made = client.post(
                f"/api/workspaces/{ws}/files", files={"file": (path.name, f)}, data={"sheet": sheet} if sheet else {}
            )
        assert made.status_code == 201, made.text
        names.append(made.json()["dataset"]["name"])
        location = client.get(f"/workspaces/{ws}?duplicate={made.json()['dataset']['id']}").text
        assert "data-duplicate-upload" not in location
    assert names == ["门店", "门店_二月"]
    page = client.get(f"/workspaces/{ws}").text
    assert (
        '<h3 class="dataset-title">门店.xlsx · 一月</h3>' in page
        and '<h3 class="dataset-title">门店.xlsx · 二月</h3>' in page
    )
