"""Trajectories: `schema` (one JSONL record per episode, OpenAI chat messages), `recording` (any
served episode as a trajectory) and `export` (OpenAI, TRL, verifiers and parquet datasets)."""

from mcpsim.trajectories._export import ExportError, export
from mcpsim.trajectories._journal import TRAJECTORIES, Journal, JournalError
from mcpsim.trajectories._records import (
    CallLog,
    FunctionCall,
    Message,
    Termination,
    TokenTurn,
    ToolCall,
    ToolDef,
    Trajectory,
    Usage,
)
from mcpsim.trajectories._served import Recorder, episode_trajectory

__all__ = [
    "CallLog",
    "ExportError",
    "FunctionCall",
    "Journal",
    "JournalError",
    "Message",
    "Recorder",
    "TRAJECTORIES",
    "Termination",
    "TokenTurn",
    "ToolCall",
    "ToolDef",
    "Trajectory",
    "Usage",
    "episode_trajectory",
    "export",
]
