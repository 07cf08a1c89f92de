"""The research world's seeder: the universe drawn from the seeded sources, the corpus written
about it, and the full-text index built once over it (in the template, so every episode starts
with it: a reset is a page copy, never a re-index)."""

from __future__ import annotations

from mcpsim.world import SeedContext

from .. import world
from ..tables import FTS, Document
from .documents import write_corpus
from .universe import Organisation, draw_universe

__all__ = ["build_universe", "seed"]


def build_universe(ctx: SeedContext) -> tuple[list[Organisation], list[dict[str, object]]]:
    """The organisations and the documents' rows, from the context's seeded sources."""
    orgs = draw_universe(ctx.rng, ctx.faker, int(ctx.params["organisations"]))
    rows = write_corpus(ctx.rng, ctx.faker, orgs, int(ctx.params["filler"]), lambda: ctx.ids.new("document"))
    return orgs, rows


@world.seeder
def seed(ctx: SeedContext) -> None:
    _, rows = build_universe(ctx)
    ctx.insert(Document, rows)
    ctx.session.connection().exec_driver_sql(f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')")
