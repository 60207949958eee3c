"""The built-in analyst (SPEC §10): a deterministic planner behind the ChatModel interface, for
when no language model is configured. It reads the question with app.understanding, plans the
standard analyses that fit (plan.py, data_tasks.py, designs.py, versus_rest.py), asks when a role
would be filled by default (role_question.py), calls the same tools a model would, and writes the
answer in plain words from the tools' results (headlines.py).

It imports only app.understanding, the model interface (app.agent.model.interface) and the
analysis tools' registry (analysis_tools), never the rest of the harness.
"""

from app.analyst.analyst import HONESTY, BuiltinAnalyst

__all__ = ["HONESTY", "BuiltinAnalyst"]
