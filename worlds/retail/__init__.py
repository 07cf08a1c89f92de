"""The retail world: a shop's back office (customers, catalog, orders, payments, shipments,
returns and exchanges), in the spirit of tau-bench's retail domain.

`world` is the entry point (`mcpsim.worlds: retail = mcpsim_worlds.retail:world`). The tools, the
seeder and the rubric checks register on it when their modules are imported below.
"""

from pathlib import Path

from mcpsim.world import World

from .tables import RetailTable

world = World.from_manifest(Path(__file__).with_name("world.yaml"), metadata=RetailTable.metadata)

from . import checks, seed, tools  # noqa: E402, F401  (registering on the world)

__all__ = ["world"]
