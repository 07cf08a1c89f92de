"""The workspace seeder: the fixed story, then filler sized by the scale (see `builder.py`)."""

from __future__ import annotations

from mcpsim.world import SeedContext

from .. import world
from .builder import Builder


@world.seeder
def seed(ctx: SeedContext) -> None:
    builder = Builder(ctx)
    builder.story()
    builder.filler()
    builder.insert()
