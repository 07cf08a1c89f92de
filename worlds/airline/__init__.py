"""The airline world: an airline's reservations desk (members, flights, seats and fares,
reservations, baggage, payments, changes, cancellations and compensation), in the spirit of
tau-bench's airline domain with stricter, tool-enforced rules.

`world` is the entry point (`mcpsim.worlds: airline = mcpsim_worlds.airline:world`). The tool
modules register on it when imported below.
"""

from pathlib import Path

from mcpsim.world import World

from .tables import AirlineTable

world = World(
    "airline",
    title="Meridian Air reservations desk",
    description="Customer service for an airline: identify members, search flights, book, change and cancel "
    "reservations, add bags and insurance, and issue compensation for disrupted flights.",
    metadata=AirlineTable.metadata,
    policy=Path(__file__).with_name("policy.md"),
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

# Importing a tool module registers its tools; this order is the order agents see them in.
from . import users, flights, booking, changes, cancellation, compensation, support  # noqa: F401, I001
from .seed import seed

world.seeder(seed)

__all__ = ["world"]

from . import checks  # noqa: F401  (custom rubric checks register on the world)
