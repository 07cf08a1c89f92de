"""The airline world: an airline's reservations desk (members, flights, seats and fares,
reservations, baggage, payments, changes, cancellations and compensation), in the spirit of
tau-bench's airline domain with stricter, tool-enforced rules.

`world` is the entry point (`mcpsim.worlds: airline = mcpsim_worlds.airline:world`). The tools,
the seeder and the rubric checks register on it when their modules are imported below.

    tables.py     the SQLModel tables
    views.py      what tools return, and the functions that build it from rows
    rules.py      the fixed rules, id formats, and the lookups the tools share
    inputs.py     argument types shared by tools
    ledger.py     charges, refunds and certificates
    itinerary.py  checking and shaping a trip's flights
    tools/        the tools, one module per group
    seed/         the seeder: network, members, bookings
    checks.py     custom rubric checks
"""

from pathlib import Path

from mcpsim.world import World

from .rules import ID_FORMATS
from .tables import AirlineTable

world = World(
    "airline",
    title="Meridian Air reservations desk",
    description="Customer service for an airline: identify members, search flights, book, change and cancel "
    "reservations, add bags and insurance, and issue compensation for disrupted flights.",
    metadata=AirlineTable.metadata,
    policy=Path(__file__).with_name("policy.md"),
    id_formats=ID_FORMATS,
    scales={
        "small": {
            "airports": 8,
            "extra_routes": 4,
            "past_days": 4,
            "future_days": 8,
            "users": 25,
            "reservations": 60,
            "gift_cards": 3,
        },
        "default": {
            "airports": 24,
            "extra_routes": 30,
            "past_days": 14,
            "future_days": 30,
            "users": 500,
            "reservations": 1500,
            "gift_cards": 25,
        },
        "large": {
            "airports": 32,
            "extra_routes": 120,
            "past_days": 30,
            "future_days": 60,
            "users": 8000,
            "reservations": 25000,
            "gift_cards": 400,
        },
    },
)

from . import tools, seed, checks  # noqa: E402, F401, I001  (importing them registers on `world`)

__all__ = ["world"]
