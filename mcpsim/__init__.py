"""mcpsim: stateful simulated tool worlds backed by SQLite, served by real MCP servers.

What users import most is here: the world API (`World`, `ToolContext`, `WorldError`, ...), an
episode (`Episode`, `CallResult`), the registry of installed worlds, and the task and grading
entry points. The packages by plane: `mcpsim.world`, `mcpsim.engine`, `mcpsim.tasks`,
`mcpsim.grading`, `mcpsim.trajectories`, `mcpsim.serve`, `mcpsim.runner`, `mcpsim.cli`.
"""

__version__ = "0.1.0"

from mcpsim.engine.episode import CallResult, Episode
from mcpsim.engine.templates import TemplateCache
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
)
from mcpsim.world.registry import load_world, world_names

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
