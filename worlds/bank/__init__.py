"""The bank world: a retail bank's customer-service desk (identity verification, accounts,
debit cards, payees, transfers with daily limits and fraud holds, disputes, statements).

`world` is the entry point (`mcpsim.worlds: bank = mcpsim_worlds.bank:world`). Its tools, seeder
and rubric checks register on it when their modules are imported below.
"""

from pathlib import Path

from mcpsim.world import World

from .rules import ID_FORMATS
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
    id_formats=ID_FORMATS,
)

from . import tools, seed, checks  # noqa: E402, F401, I001  (they register on the world)

__all__ = ["world"]
