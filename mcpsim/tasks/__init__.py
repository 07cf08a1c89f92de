"""Tasks: what an agent is asked to do in a world, how an episode of it starts, and the audit of a
task set.

- `schema`: the task file format (pydantic models: setup, gold actions, rubric checks, facts) and
  loading;
- `scenario`: task episodes (the world plus the task's setup, cached), gold replay, the oracle;
- `dialogue`: confirmation questions and the scripted user's answers;
- `datalock`: the template hashes a world's tasks were written against.

The task models are re-exported here: `from mcpsim.tasks import Task, load_tasks`.
"""

from mcpsim.tasks import schema as _schema
from mcpsim.tasks.schema import *  # noqa: F403 (the names in schema.__all__)

__all__ = _schema.__all__
