"""The bank world: a retail bank's customer-service desk (identity verification, accounts,
debit cards, payees, transfers with daily limits and fraud holds, disputes, statements).

`world` is the entry point (`mcpsim.worlds: bank = mcpsim_worlds.bank:world`). The tool modules
register on it when imported below.
"""

from pathlib import Path

from mcpsim.world import World

from .tables import BankTable

world = World(
    "bank",
    title="Retail bank customer service",
    description="Customer service for a retail bank: verify the caller's identity, then help with accounts, "
    "statements, debit cards (freeze, replace, limits), payees, transfers and card disputes.",
    metadata=BankTable.metadata,
    policy=Path(__file__).with_name("policy.md"),
    scales={
        "small": {"customers": 16, "purchases_per_month": [6, 12]},
        "default": {"customers": 200, "purchases_per_month": [8, 18]},
        "large": {"customers": 1_000, "purchases_per_month": [8, 18]},
    },
)

# Importing a tool module registers its tools; this order is the order agents see them in.
from . import customers, accounts, cards, payees, transfers, disputes, support  # noqa: F401, I001
from .seed import seed

world.seeder(seed)

__all__ = ["world"]

from . import checks  # noqa: F401  (custom rubric checks register on the world)
