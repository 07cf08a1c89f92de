"""Trajectories for tests: the fields a `Trajectory` requires filled in, beside those a test sets."""

from __future__ import annotations

from typing import Any

from mcpsim.trajectories._records import Trajectory

REQUIRED = {"world": "w", "world_version": "v", "agent": "a", "status": "completed", "termination": "answered"}


def a_trajectory(**fields: Any) -> Trajectory:
    """A trajectory of `fields`, the required ones not among them as in `REQUIRED`."""
    return Trajectory(**{**REQUIRED, **fields})
