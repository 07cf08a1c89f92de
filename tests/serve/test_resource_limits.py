"""Bounded resources: rejected calls stored truncated, a byte budget (LRU) for cached templates,
and an episode cap in bytes as well as in count, each configurable and documented."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from mcpsim.engine import _store as store
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache, parse_size, process_templates
from mcpsim.serve._app import ServeConfig
from mcpsim.serve._host import EpisodeLimitReached, EpisodeManager
from tests.conftest import CLEAN_ENV

pytestmark = pytest.mark.anyio

TOKEN = "limits-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}
BIG = "x" * (4 * 1024 * 1024)  # a 4 MB argument


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("get_account", {"account_id": BIG}),  # invalid: longer than the schema allows
        ("open_account", {"owner": "Ada", "junk": [BIG]}),  # invalid: unexpected argument
        ("no_such_tool", {"payload": BIG}),  # unknown tool
        ("x" * 100_000, {"payload": BIG}),  # unknown tool with a huge name
    ],
)
def test_a_rejected_calls_arguments_are_stored_truncated_with_their_size(ledger, templates, tool, arguments):
    episode = Episode.create(ledger, 0, "small", templates=templates)
    before = episode.size_bytes
    for _ in range(5):
        assert episode.call(tool, arguments).is_error
    record = episode.transcript()[-1]
    assert not record.ok
    stored = record.arguments
    assert stored[store.TRUNCATED] is True
    assert stored["$bytes"] == len(json.dumps(arguments))  # the original size, recorded
    assert len(stored["$head"]) == store.MAX_REJECTED_ARGUMENTS
    assert stored["$head"] == json.dumps(arguments)[: store.MAX_REJECTED_ARGUMENTS]
    assert len(record.tool) <= store.MAX_TOOL_NAME + 50 and len(record.error or "") <= store.MAX_REJECTED_TEXT + 50
    # Five 4 MB calls grew the database by a few pages, not by 20 MB.
    assert episode.size_bytes - before < 256 * 1024, (before, episode.size_bytes)
    assert len(episode.snapshot()) < before + 256 * 1024
    episode.close()


def test_small_rejected_arguments_and_accepted_calls_are_stored_whole(ledger, templates):
    episode = Episode.create(ledger, 0, "small", templates=templates)
    assert episode.call("get_account", {"account_id": "nope"}).is_error  # refused by the world, small
    assert episode.call("open_account", {"owner": "A" * 100}).error is None
    refused, opened = episode.transcript()
    assert refused.arguments == {"account_id": "nope"}
    assert opened.arguments == {"owner": "A" * 100}
    episode.close()


def test_the_template_cache_keeps_within_its_byte_budget_least_recently_used_first(ledger):
    size = len(TemplateCache(max_bytes=None).get(ledger, 0, "small"))
    cache = TemplateCache(max_bytes=int(size * 2.5))  # room for two templates
    first = cache.get(ledger, 0, "small")
    cache.get(ledger, 1, "small")
    assert cache.get(ledger, 0, "small") is first  # a hit, and 0 is now the most recently used
    assert cache.builds == 2
    cache.get(ledger, 2, "small")  # evicts seed 1, the least recently used
    assert cache.evictions == 1 and cache.size_bytes <= cache.max_bytes
    assert cache.get(ledger, 0, "small") is first and cache.builds == 3
    again = cache.get(ledger, 1, "small")  # rebuilt, with the same bytes
    assert cache.builds == 4 and again == TemplateCache(max_bytes=None).get(ledger, 1, "small")
    assert cache.size_bytes <= cache.max_bytes
    cache.set_max_bytes(size)  # shrinking evicts at once
    assert cache.size_bytes <= size
    tiny = TemplateCache(max_bytes=size // 2)  # a template larger than the budget is served, not kept
    assert tiny.get(ledger, 0, "small") == first and tiny.size_bytes == 0


def test_the_process_cache_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("MCPSIM_TEMPLATE_CACHE_BYTES", "256MiB")
    assert process_templates.__wrapped__().max_bytes == 256 * 1024**2
    monkeypatch.setenv("MCPSIM_TEMPLATE_CACHE_BYTES", "0")
    assert process_templates.__wrapped__().max_bytes is None
    monkeypatch.delenv("MCPSIM_TEMPLATE_CACHE_BYTES")
    assert process_templates.__wrapped__().max_bytes == 1024**3
    assert TemplateCache().max_bytes == 1024**3  # the constructor's default: generous, not unbounded
    assert (parse_size("4GiB"), parse_size("1.5 GB"), parse_size("4096")) == (4 * 1024**3, 1_500_000_000, 4096)
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_the_episode_cap_counts_bytes(ledger, templates):
    one = Episode.create(ledger, 0, "small", templates=templates)
    size = one.size_bytes
    one.close()
    assert size == len(templates.get(ledger, 0, "small"))  # page count x page size
    # two episodes of one template: their two databases plus the template they keep alive, counted once
    manager = EpisodeManager(
        templates, max_episodes=100, max_episode_bytes=int(size * 3.5), ttl_seconds=None, worlds=lambda name: ledger
    )
    a = manager.create("ledger", 0, "small")
    manager.create("ledger", 0, "small")
    with pytest.raises(EpisodeLimitReached, match=r"memory budget.*--max-episode-bytes"):
        manager.create("ledger", 0, "small")
    with pytest.raises(EpisodeLimitReached, match="memory budget"):  # a fork is refused too
        manager.add(a.fork())
    assert len(manager) == 2
    manager.delete(a.id)
    manager.create("ledger", 0, "small")  # room again
    assert manager.live_bytes() == 3 * size <= manager.max_episode_bytes
    manager.close()


def test_templates_the_episodes_keep_alive_count_once_each(ledger, templates):
    """One seed per episode (as in RL) pins one template per episode, which the template cache's
    own budget no longer frees: the episode budget counts each one."""
    manager = EpisodeManager(templates, max_episodes=100, ttl_seconds=None, worlds=lambda name: ledger)
    episodes = [manager.create("ledger", seed, "small") for seed in range(3)]
    bases = [e.base for e in episodes]
    assert all(b is not None for b in bases) and len({id(b) for b in bases}) == 3
    assert manager.live_bytes() == sum(e.size_bytes for e in episodes) + sum(len(b) for b in bases if b)
    manager.close()


def test_an_episode_that_grows_counts_its_new_size(ledger, templates):
    episode = Episode.create(ledger, 0, "small", templates=templates)
    start = episode.size_bytes
    for i in range(300):
        assert episode.call("open_account", {"owner": f"owner {i} " + "y" * 80}).error is None
    assert episode.size_bytes > start and episode.size_bytes == len(episode.snapshot())
    episode.close()


async def test_past_the_byte_budget_creation_gets_503_with_retry_after_and_the_reason(serve_http, ledger, templates):
    size = len(templates.get(ledger, 0, "small"))
    live = serve_http([ledger], token=TOKEN, max_episodes=100)
    live.manager.max_episode_bytes = int(size * 1.5)
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH) as http:
        first = await http.post("/episodes", json={"world": "ledger", "scale": "small"})
        assert first.status_code == 201, first.text
        for method, path in [("POST", "/episodes"), ("POST", f"/episodes/{first.json()['id']}/fork")]:
            r = await http.request(
                method, path, json={"world": "ledger", "scale": "small"} if path == "/episodes" else None
            )
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] and "memory budget" in r.json()["error"]
            assert "--max-episode-bytes" in r.json()["error"]
        assert len(live.manager) == 1
        assert (await http.delete(f"/episodes/{first.json()['id']}")).status_code == 204
        assert (await http.post("/episodes", json={"world": "ledger", "scale": "small"})).status_code == 201


def test_every_limit_is_in_the_help_and_the_environment():
    out = subprocess.run(
        [sys.executable, "-m", "mcpsim", "serve", "--help"],
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
        timeout=120,
        check=True,
    ).stdout
    for option in ("--max-episodes", "--max-episode-bytes", "--template-cache-bytes", "--ttl"):
        assert option in out, option
    config = ServeConfig.from_env({"MCPSIM_MAX_EPISODE_BYTES": "2GiB", "MCPSIM_TEMPLATE_CACHE_BYTES": "unlimited"})
    assert config.max_episode_bytes == 2 * 1024**3 and config.template_cache_bytes is None
    defaults = ServeConfig()
    assert defaults.max_episode_bytes == 4 * 1024**3 and defaults.template_cache_bytes == 1024**3
