"""The research corpus at every scale: the large one holds over 10,000 documents (its organisations
outnumber the distinct names the first draw gives, so a name stem runs out of suffixes), and the
same seed builds the same corpus twice."""

from __future__ import annotations

import pytest

from mcpsim import TemplateCache, load_world
from mcpsim.engine import Episode


@pytest.mark.parametrize(("scale", "least"), [("small", 300), ("default", 3_000), ("large", 10_000)])
def test_every_scale_builds_and_the_same_seed_builds_the_same_corpus(scale: str, least: int) -> None:
    world = load_world("research")
    first, second = (Episode.clone(world, TemplateCache(None).get(world, 0, scale)) for _ in range(2))
    assert first.query("SELECT COUNT(*) AS n FROM documents")[0]["n"] >= least
    names = first.query("SELECT COUNT(DISTINCT title) AS n FROM documents WHERE kind = 'profile'")[0]["n"]
    assert names == first.query("SELECT COUNT(*) AS n FROM documents WHERE kind = 'profile'")[0]["n"]
    assert first.state_hash() == second.state_hash()
