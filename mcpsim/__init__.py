"""mcpsim: stateful simulated tool worlds backed by SQLite, served by real MCP servers.

The public world API lives here; transports, the control plane and the CLI are in their own
modules (`mcpsim.serve.mcp`, `mcpsim.serve.app`, `mcpsim.cli`).
"""

__version__ = "0.1.0"

from mcpsim.engine.episode import CallResult, Episode  # noqa: E402
from mcpsim.world.registry import load_world, world_names  # noqa: E402
from mcpsim.world.seeding import IdGenerator, SeedContext  # noqa: E402
from mcpsim.engine.templates import TemplateCache  # noqa: E402
from mcpsim.world import ToolContext, ToolSpec, World, WorldError  # noqa: E402

__all__ = [
    "CallResult",
    "Episode",
    "IdGenerator",
    "SeedContext",
    "TemplateCache",
    "ToolContext",
    "ToolSpec",
    "World",
    "WorldError",
    "__version__",
    "load_world",
    "world_names",
]
