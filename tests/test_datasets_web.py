"""Switching sheets and going back to earlier versions, from the page, the API and the agent."""

from sqlalchemy import select

from app.agent.model import ModelReply
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
    assert [(v["version"], v["active"], v["sheet"]) for v in versions] == [(1, False, "Orders 2024"), (2, True, "Notes")]
    back = client.post(f"/api/workspaces/{ws}/datasets/{dataset['id']}/activate").json()["versions"]
    assert [v["active"] for v in back] == [True, False]
    missing = client.post(f"/api/workspaces/{ws}/datasets/{dataset['id']}/sheet", json={"sheet": "Nope"})
    assert missing.status_code == 400 and missing.json()["error"]["category"] == "no_table_found"


def test_switch_sheet_from_the_page(client):
    ws, dataset = upload(client, "Page")
    page = client.get(f"/workspaces/{ws}").text
    assert "Notes (2" in page  # the other sheet is offered
    done = client.post(f"/workspaces/{ws}/datasets/{dataset['id']}/sheet", data={"sheet": "Notes"},
                       follow_redirects=True)
    assert done.status_code == 200 and "Go back to this version" in done.text


def test_the_agent_can_select_a_sheet(tmp_path):
    model = ScriptedModel([ModelReply(None, [call("select_sheet", "c1", sheet="Notes")]),
                           ModelReply(None, [call("preview_data", "c2")]), ModelReply("ok")])
    settings, db, service, ws = setup(tmp_path, SAMPLES / "retail_sales.xlsx", lambda *_: model)
    service.execute(start_run(service, ws, "use the notes sheet"))
    assert "[dataset]" in model.requests[1]["messages"][-1]["content"]
    preview = model.requests[2]["messages"][-1]["content"]
    assert "Order ID" not in preview  # the preview now reads the Notes sheet
    with db.session() as s:
        [current] = active_datasets(s, ws)
        assert current.sheet == "Notes" and current.version == 2
        assert len(list(s.scalars(select(Dataset)))) == 2
