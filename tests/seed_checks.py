"""What every world's seed tests check the same way: table sizes, a small build that stays fast,
the large scale behind MCPSIM_SLOW, and that the columns tools look up by are indexed."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import pytest

from mcpsim.engine.episode import Episode
from mcpsim.engine.templates import TemplateCache, build_template
from mcpsim.world import World

F = TypeVar("F", bound=Callable[..., object])


def counts(ep: Episode) -> dict[str, int]:
    """Rows per table."""
    return {name: len(rows) for name, rows in ep.tables().items()}


def small_built_fast(world: World, seed: int) -> Episode:
    """A fresh small-scale episode, after checking that its template builds in under a second (about
    0.1 s; the bound leaves room for slow machines)."""
    started = time.perf_counter()
    build_template(world, seed, "small")
    assert time.perf_counter() - started < 1.0
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
