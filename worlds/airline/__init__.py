"""The airline world: an airline's reservations desk (members, flights, seats and fares,
reservations, baggage, payments, changes, cancellations and compensation), in the spirit of
tau-bench's airline domain with stricter, tool-enforced rules.

`world` is the entry point (`mcpsim.worlds: airline = mcpsim_worlds.airline:world`). The tools,
the seeder and the rubric checks register on it when their modules are imported below.

    tables.py     the SQLModel tables
    views.py      what tools return, and the functions that build it from rows
    world.yaml    its name, title, scales and id formats (`World.from_manifest`)
    rules.py      the fixed rules, and the lookups the tools share
    inputs.py     argument types shared by tools
    ledger.py     charges, refunds and certificates
    itinerary.py  checking and shaping a trip's flights
    tools/        the tools, one module per group
    seed/         the seeder: network, members, bookings
    checks.py     custom rubric checks
"""

from pathlib import Path

from mcpsim.world import World

from .tables import AirlineTable

world = World.from_manifest(Path(__file__).with_name("world.yaml"), metadata=AirlineTable.metadata)

from . import tools, seed, checks  # noqa: E402, F401, I001  (importing them registers on `world`)

__all__ = ["world"]
