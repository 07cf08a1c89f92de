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
- `registry`: worlds installed through the `mcpsim.worlds` entry-point group, registered at run
  time, or found in the folders of the worlds path (`MCPSIM_WORLDS_PATH`, a checkout's `worlds/`).
"""

from mcpsim.world._core import PartialFailure, ToolContext, ToolSpec, World, WorldError
from mcpsim.world._paging import page
from mcpsim.world._registry import (
    GROUP,
    UnknownWorld,
    load_world,
    register_world,
    searching_worlds_folder,
    world_folder,
    world_names,
    world_registrations,
    worlds_path,
)
from mcpsim.world._seeding import IdGenerator, SeedContext, derive_seed, load_seed_data
from mcpsim.world._standard import Link, add_calculator, add_handoff, attach_gift_card, handoff_summary, open_ticket
from mcpsim.world._toolkit import dollars, iso, money, net_by_method, to_cents
from mcpsim.world._views import RowView

__all__ = [
    "GROUP",
    "IdGenerator",
    "Link",
    "PartialFailure",
    "RowView",
    "SeedContext",
    "ToolContext",
    "ToolSpec",
    "UnknownWorld",
    "World",
    "WorldError",
    "add_calculator",
    "add_handoff",
    "attach_gift_card",
    "derive_seed",
    "dollars",
    "handoff_summary",
    "iso",
    "load_seed_data",
    "load_world",
    "money",
    "net_by_method",
    "open_ticket",
    "page",
    "register_world",
    "searching_worlds_folder",
    "to_cents",
    "world_folder",
    "world_names",
    "world_registrations",
    "worlds_path",
]
