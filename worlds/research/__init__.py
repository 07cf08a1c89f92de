"""The research world: desk research over a deterministic, billed document corpus (company
profiles, filings, news, tables) about a fictional universe of organisations, people and products.

`world` is the entry point (`mcpsim.worlds: research = mcpsim_worlds.research:world`). The tools,
their prices, the seeder and the rubric checks register on it when their modules are imported.
"""

from pathlib import Path

from mcpsim.world import World

from .tables import ResearchTable

world = World.from_manifest(Path(__file__).with_name("world.yaml"), metadata=ResearchTable.metadata)

from . import checks, seed, tools  # noqa: E402, F401  (registering on the world)

__all__ = ["world"]
