"""The web app: one router module per feature, shared dependencies in `deps.py`. Routers never import
each other: what several show lives in `pages.py` (the workspace page, dataset views), `run_panel.py`
(the run panel), `uploads.py` (the upload service) and `report_files.py` (a report's files)."""
