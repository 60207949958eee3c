"""The policy room (SPEC §2, §5, §7–§9): what decides, bounds and checks a turn — the intent and
its budgets (intent.py, budget.py), the clarification gates and the pause for an answer
(gates.py, clarify.py), claim verification and the synthesis policy (verification.py), and the
masking of personal data (privacy.py)."""
