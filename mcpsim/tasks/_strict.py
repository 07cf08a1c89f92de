"""The base of every task-file model: unknown keys are refused and a loaded model is frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Strict"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
