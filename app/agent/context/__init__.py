"""The context room (SPEC §4, §6): what a turn's model sees and how it stays within its budget
without losing data — trust tiers (tiers.py), the four-level cascade (compaction.py, outputs.py,
previews.py, summary.py), the budget table of a call (budget_table.py), and what a turn is told
besides the data: confirmed definitions, knowledge (retrieval.py), earlier findings (memory.py),
the workspace conversation (conversation.py), the question's reading (question_reading.py)."""
