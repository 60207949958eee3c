"""Verity: the web app, the CLI and the agent harness."""
