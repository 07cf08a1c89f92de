"""The retail world: a shop's back office (customers, catalog, orders, payments, shipments,
returns and exchanges), in the spirit of tau-bench's retail domain.

`world` is the entry point (`mcpsim.worlds: retail = mcpsim_worlds.retail:world`). The tool
modules register on it when imported below.
"""

from pathlib import Path

from mcpsim.world import World

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
)

# Importing a tool module registers its tools; this order is the order agents see them in.
from . import customers, catalog, orders, order_changes, after_sales, support  # noqa: F401, I001
from .seed import seed

world.seeder(seed)

__all__ = ["world"]

from . import checks  # noqa: E402, F401  (custom rubric checks register on the world)
