"""The bank world's seeder: customers with their accounts, cards, payees and six and a half
months of history (`builder`), drawn from fixed reference data (`data`)."""

from __future__ import annotations

from mcpsim.world import SeedContext

from .. import world
from .builder import Builder


@world.seeder
def seed(ctx: SeedContext) -> None:
    builder = Builder(ctx)
    builder.build(ctx.params["customers"])
    builder.insert()
