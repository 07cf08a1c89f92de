"""What a world author imports: the `World` (tables, tools, seeder, policy, scales), the tool
context, business errors, deterministic seeding, small helpers and the registry of installed
worlds. Nothing here knows about MCP or HTTP.

- `core`: World, ToolSpec, ToolContext, WorldError, PartialFailure;
- `seeding`: IdGenerator, derive_seed, SeedContext (seeded Faker, random, epoch, bulk inserts);
- `toolkit`: safe arithmetic, cents and dollars, money netted per payment method, timestamps;
- `views`: RowView, tool results built from rows in one call;
- `paging`: page(), one page of rows and how many match in all;
- `standard`: standard tools a world opts into (add_calculator) and the hand-off to a human
  (handoff_summary, open_ticket);
- `registry`: worlds installed through the `mcpsim.worlds` entry-point group.
"""

from mcpsim.world.core import PartialFailure, SeedFunction, ToolContext, ToolSpec, World, WorldError
from mcpsim.world.seeding import IdFormats, IdGenerator, SeedContext, derive_seed
from mcpsim.world.standard import add_calculator
from mcpsim.world.views import RowView

__all__ = [
    "IdFormats",
    "IdGenerator",
    "PartialFailure",
    "RowView",
    "SeedContext",
    "SeedFunction",
    "ToolContext",
    "ToolSpec",
    "World",
    "WorldError",
    "add_calculator",
    "derive_seed",
]
