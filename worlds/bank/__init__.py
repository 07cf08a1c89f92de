"""The bank world: a retail bank's customer-service desk (identity verification, accounts,
debit cards, payees, transfers with daily limits and fraud holds, disputes, statements).

`world` is the entry point (`mcpsim.worlds: bank = mcpsim_worlds.bank:world`). Its tools, seeder
and rubric checks register on it when their modules are imported below.
"""

from pathlib import Path

from mcpsim.world import World

from .tables import BankTable

world = World.from_manifest(Path(__file__).with_name("world.yaml"), metadata=BankTable.metadata)

from . import tools, seed, checks  # noqa: E402, F401, I001  (they register on the world)

__all__ = ["world"]
