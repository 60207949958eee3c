"""The web app: one router module per feature, shared dependencies in `deps.py`."""
