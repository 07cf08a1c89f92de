"""The environment API for in-process training loops: gym-style `reset(task)` and `step(action)`
over MCP in memory, the verifier's reward at the end, and fork, snapshot and restore
(docs/trainers/env.md)."""

from mcpsim.env._environment import (
    Action,
    AsyncEnv,
    Env,
    EnvError,
    EnvSnapshot,
    MessageAction,
    Observation,
    StepResult,
    ToolCallAction,
)

__all__ = [
    "Action",
    "AsyncEnv",
    "Env",
    "EnvError",
    "EnvSnapshot",
    "MessageAction",
    "Observation",
    "StepResult",
    "ToolCallAction",
]
