"""Templates are built once per (world, version, seed, scale) and cloned, never regenerated."""

from __future__ import annotations

import threading

import pytest

from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache


def test_a_template_is_built_once_per_key_however_many_episodes(ledger):
    cache = TemplateCache()
    for _ in range(5):
        Episode.create(ledger, seed=4, scale="small", templates=cache)
    assert cache.builds == 1
    Episode.create(ledger, seed=5, scale="small", templates=cache)
    Episode.create(ledger, seed=4, scale="default", templates=cache)
    assert cache.builds == 3


def test_concurrent_first_requests_build_the_template_once(ledger):
    cache = TemplateCache()
    results: list[bytes] = []
    threads = [threading.Thread(target=lambda: results.append(cache.get(ledger, 9, "small"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert cache.builds == 1 and len(set(results)) == 1 and len(results) == 8


def test_the_disk_cache_is_reused_by_a_new_process_cache_and_keyed_by_version(ledger, tmp_path):
    first = TemplateCache(tmp_path)
    data = first.get(ledger, 3, "small")
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and ledger.version in files[0].name and not list(tmp_path.glob("*.tmp"))
    second = TemplateCache(tmp_path)
    assert second.get(ledger, 3, "small") == data and second.builds == 0


def test_an_unknown_scale_is_a_clear_error(ledger):
    with pytest.raises(ValueError, match="no scale 'huge'; choose from"):
        TemplateCache().get(ledger, 0, "huge")
