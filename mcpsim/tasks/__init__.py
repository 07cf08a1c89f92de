"""Tasks: what an agent is asked to do in a world, how an episode of it starts, and the audit of a
task set.

- `schema`: the task file format (pydantic models: setup, gold actions, rubric checks, facts) and
  loading;
- `scenario`: task episodes (the world plus the task's setup, cached), gold replay, the oracle;
- `dialogue`: confirmation questions and the scripted user's answers;
- `datalock`: the template hashes a world's tasks were written against.

The task models are re-exported here: `from mcpsim.tasks import Task, load_tasks`.
"""

from mcpsim.tasks.schema import (
    CANARY_PREFIX,
    Action,
    AllowedChanges,
    AllowRule,
    AnswerFacts,
    AnyFact,
    CallOrder,
    Check,
    CheckBase,
    ColumnSum,
    ConfirmationReply,
    Confirmed,
    CountFact,
    Custom,
    DateFact,
    DurationFact,
    Fact,
    FieldEquals,
    GoldState,
    IdFact,
    MoneyFact,
    NameFact,
    NumberFact,
    PhraseFact,
    RowAbsent,
    RowCount,
    RowExists,
    Say,
    SetupCall,
    SetupDelete,
    SetupInsert,
    SetupStep,
    SetupUpdate,
    Solution,
    Step,
    Task,
    TaskFile,
    TaskFileError,
    TaskSet,
    TimeFact,
    ToolCalled,
    ToolNotCalled,
    UnknownTask,
    UserSpec,
    Where,
    load_task_dir,
    load_task_file,
    load_tasks,
    state_fact,
    task_folder,
)

__all__ = [
    "CANARY_PREFIX", "Action", "AllowRule", "AllowedChanges", "AnswerFacts", "AnyFact", "CallOrder", "Check",
    "CheckBase", "ColumnSum", "ConfirmationReply", "Confirmed", "CountFact", "Custom", "DateFact", "DurationFact",
    "Fact", "FieldEquals", "GoldState", "IdFact", "MoneyFact", "NameFact", "NumberFact", "PhraseFact", "RowAbsent",
    "RowCount", "RowExists", "Say", "SetupCall", "SetupDelete", "SetupInsert", "SetupStep", "SetupUpdate",
    "Solution", "Step", "Task", "TaskFile", "TaskFileError", "TaskSet", "TimeFact", "ToolCalled", "ToolNotCalled",
    "UnknownTask", "UserSpec", "Where", "load_task_dir", "load_task_file", "load_tasks", "state_fact", "task_folder",
]
