"""What every world's seed tests check the same way: table sizes, a small build that stays fast,
the large scale behind MCPSIM_SLOW (`large_scale_test`), another seed building other data
(`other_seed_test`), and that the columns tools look up by are indexed."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import pytest

from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache, build_template
from mcpsim.world import World
from mcpsim.world._registry import load_world

F = TypeVar("F", bound=Callable[..., object])


def counts(ep: Episode) -> dict[str, int]:
    """Rows per table."""
    return {name: len(rows) for name, rows in ep.tables().items()}


def small_built_fast(world: World, seed: int) -> Episode:
    """A fresh small-scale episode, after checking that its template builds from scratch. How fast
    is measured by the benchmarks (`benchmarks/creation.py`), never asserted here: a loaded machine
    may take any time."""
    build_template(world, seed, "small")
    return Episode.create(world, seed=seed, scale="small", templates=TemplateCache())


def large_scale(about: str) -> Callable[[F], F]:
    """Marks a test that builds the large scale (taking `about`): slow, and run only with MCPSIM_SLOW=1."""
    skip = pytest.mark.skipif(
        not os.environ.get("MCPSIM_SLOW"), reason=f"builds the large scale ({about}); set MCPSIM_SLOW=1"
    )

    def mark(test: F) -> F:
        return pytest.mark.slow(skip(test))

    return mark


def large_episode(world: World) -> Episode:
    return Episode.create(world, seed=0, scale="large", templates=TemplateCache())


def unindexed(ep: Episode, looked_up: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    """The columns of `looked_up` (table -> columns tools look rows up by) that lead no index."""
    missing = {}
    for table, columns in looked_up.items():
        leading = {
            ep.query(f"PRAGMA index_info('{index['name']}')")[0]["name"]
            for index in ep.query(f"PRAGMA index_list('{table}')")
        }
        if set(columns) - leading:
            missing[table] = set(columns) - leading
    return missing


def large_scale_test(
    world: str, about: str, consistent: Callable[[Episode], None], *, total: int = 0, **minimums: int
) -> Callable[[], None]:
    """The test that `world`'s large scale (taking `about` to build; run only with MCPSIM_SLOW=1)
    has at least `minimums` rows per table and `total` rows in all, and that `consistent` holds."""

    @large_scale(about)
    def test() -> None:
        ep = large_episode(load_world(world))
        sizes = counts(ep)
        short = {
            table: (sizes.get(table, 0), least) for table, least in minimums.items() if sizes.get(table, 0) < least
        }
        assert not short, f"tables with fewer rows than the large scale promises (rows, minimum): {short}"
        assert sum(sizes.values()) >= total, (sum(sizes.values()), total)
        consistent(ep)

    return test


def other_seed_test(
    world: str, *, disjoint: Mapping[str, str] | None = None, differ: Mapping[str, str] | None = None
) -> Callable[[TemplateCache], None]:
    """The test that seeds 1 and 2 of `world` build other data (small scale): per table, the
    values of its `disjoint` column have none in common, those of its `differ` column are not
    the same in the same order."""

    def test(templates: TemplateCache) -> None:
        one, two = (
            Episode.create(load_world(world), seed=s, scale="small", templates=templates).tables() for s in (1, 2)
        )
        for table, column in (disjoint or {}).items():
            common = {r[column] for r in one[table]} & {r[column] for r in two[table]}
            assert not common, f"{table}.{column}: seeds 1 and 2 share {sorted(common)[:5]}"
        for table, column in (differ or {}).items():
            assert [r[column] for r in one[table]] != [r[column] for r in two[table]], f"{table}.{column}"

    return test
