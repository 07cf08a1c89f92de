"""mcpsim: stateful simulated tool worlds backed by SQLite, served by real MCP servers.

What users import most is here: the world API (`World`, `ToolContext`, `WorldError`, ...), an
episode (`Episode`, `CallResult`), the registry of installed worlds, and the task and grading
entry points. The packages by plane: `mcpsim.world`, `mcpsim.engine`, `mcpsim.tasks`,
`mcpsim.grading`, `mcpsim.trajectories`, `mcpsim.serve`, `mcpsim.runner`, `mcpsim.cli`.

The names below are imported on first use (PEP 562), so `import mcpsim` (and the `mcpsim`
command, which a stdio client starts per session) does not pay for SQLAlchemy and the world API
until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_HOMES = {
    "CallResult": "mcpsim.engine._episode",
    "Episode": "mcpsim.engine._episode",
    "TemplateCache": "mcpsim.engine._templates",
    "IdGenerator": "mcpsim.world",
    "PartialFailure": "mcpsim.world",
    "RowView": "mcpsim.world",
    "SeedContext": "mcpsim.world",
    "ToolContext": "mcpsim.world",
    "ToolSpec": "mcpsim.world",
    "World": "mcpsim.world",
    "WorldError": "mcpsim.world",
    "add_calculator": "mcpsim.world",
    "load_world": "mcpsim.world._registry",
    "world_names": "mcpsim.world._registry",
}

if TYPE_CHECKING:
    from mcpsim.engine import CallResult, Episode, TemplateCache
    from mcpsim.world import (
        IdGenerator,
        PartialFailure,
        RowView,
        SeedContext,
        ToolContext,
        ToolSpec,
        World,
        WorldError,
        add_calculator,
        load_world,
        world_names,
    )


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mcpsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "CallResult",
    "Episode",
    "IdGenerator",
    "PartialFailure",
    "RowView",
    "SeedContext",
    "TemplateCache",
    "ToolContext",
    "ToolSpec",
    "World",
    "WorldError",
    "__version__",
    "add_calculator",
    "load_world",
    "world_names",
]
