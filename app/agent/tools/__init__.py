"""The tools room (SPEC §3, §7, §8): the tools one run can use (toolbox.py: the analysis catalog
plus the harness tools), which of them each request offers (exposure.py: tool_search), run_python
in the sandbox (python_tool.py), and the harness tools: tasks, evidence, the analysis plan,
select_sheet and the context tools."""
