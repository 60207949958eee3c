"""`verity eval` (SPEC §13): a fixed task set run with the configured model, scored and compared.

- tasks.py    the task set (data/eval/tasks.json): questions over the demo workbooks + expected facts
- facts.py    how an expected fact is checked against a finished run (report, tool calls)
- runner.py   one task = one real run through RunService, as `verity analyze` does it; metrics
- compare.py  totals, the plain table, the saved baseline and what counts as a regression
- cli.py      the subcommand (parser + command), registered in app/cli.py

The built-in analyst runs the whole set in the test suite (tests/test_eval.py); any configured
model runs it on demand with the same command.
"""
