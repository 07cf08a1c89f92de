"""The retail world: a shop's back office (customers, catalog, orders, payments, shipments,
returns and exchanges), in the spirit of tau-bench's retail domain.

`world` is the entry point (`mcpsim.worlds: retail = mcpsim_worlds.retail:world`). The tools, the
seeder and the rubric checks register on it when their modules are imported below.
"""

from pathlib import Path

from mcpsim.world import World

from .rules import ID_FORMATS
from .tables import RetailTable

world = World(
    "retail",
    title="Retail back office",
    description="Customer service for an online shop: look up customers, orders and products; "
    "place, change and cancel orders; handle returns, exchanges and refunds.",
    metadata=RetailTable.metadata,
    policy=Path(__file__).with_name("policy.md"),
    scales={
        "small": {"customers": 30, "orders": 60, "products": 12, "variants_per_product": [2, 6], "gift_cards": 3},
        "default": {
            "customers": 500,
            "orders": 1000,
            "products": 50,
            "variants_per_product": [2, 8],
            "gift_cards": 25,
        },
        "large": {
            "customers": 10_000,
            "orders": 30_000,
            "products": 200,
            "variants_per_product": [2, 8],
            "gift_cards": 500,
        },
    },
    id_formats=ID_FORMATS,
)

from . import checks, seed, tools  # noqa: E402, F401  (registering on the world)

__all__ = ["world"]
