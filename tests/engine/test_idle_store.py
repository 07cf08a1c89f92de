"""The idle-episode store: a parked episode keeps only the pages that differ from its template and
is rebuilt on its next use, transparently (same state hash, transcript, clock, ids, answers);
the manager parks the least recently used past `max_active`; the runner's MCP clients share
compiled output-schema validators; tool schemas are built once per tool."""

from __future__ import annotations

import pytest
from mcp import Client

from mcpsim.engine._episode import Episode
from mcpsim.engine._parking import EpisodeClosed
from mcpsim.engine._templates import TemplateCache
from mcpsim.runner._backends import share_validators
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._mcp import META_EPISODE, build_server


@pytest.fixture
def episode(ledger, templates) -> Episode:
    return Episode.create(ledger, seed=1, scale="small", templates=templates)


def _record(ep: Episode) -> tuple:
    """Everything a client or a grader can observe of an episode."""
    return (ep.state_hash(), ep.tables(), ep.transcript(), ep.changes(), ep.clock(), ep.calls, ep.meta())


def _play(ep: Episode, accounts: list[str], park: bool) -> list:
    """Calls that write, draw ids, fail and succeed; parked between every two calls if `park`."""
    results = []
    steps = [
        ("transfer", {"from_account": accounts[0], "to_account": accounts[1], "amount": 2.5}),
        ("open_account", {"owner": "Parked Person"}),
        ("transfer", {"from_account": accounts[1], "to_account": accounts[0], "amount": 10**9}),  # refused
        ("list_accounts", {}),
        ("open_account", {"owner": "Rebuilt Person"}),
    ]
    for tool, args in steps:
        if park:
            assert ep.park() and ep.parked
        r = ep.call(tool, args)
        results.append((r.value, r.error, r.changes, r.call_seq))
    return results


def test_a_parked_episode_is_rebuilt_as_the_same_database(ledger, templates):
    plain = Episode.create(ledger, seed=1, scale="small", templates=templates)
    parked = Episode.create(ledger, seed=1, scale="small", templates=templates)
    accounts = [a["id"] for a in plain.tables()["account"][:2]]
    assert _play(parked, accounts, park=True) == _play(plain, accounts, park=False)
    assert parked.park()
    assert _record(parked) == _record(plain)  # rebuilt by the first of these reads
    assert parked.snapshot() == plain.snapshot()  # byte for byte
    assert not parked.parked


def test_listing_reads_a_parked_episodes_summary_without_rebuilding_it(ledger, templates):
    """GET /episodes and the live viewer read every episode's metadata and call counts: a parked
    one answers from what it kept at parking (it cannot change while parked) and stays parked."""
    plain = Episode.create(ledger, seed=1, scale="small", templates=templates)
    parked = Episode.create(ledger, seed=1, scale="small", templates=templates)
    accounts = [a["id"] for a in plain.tables()["account"][:2]]
    _play(parked, accounts, park=False)
    _play(plain, accounts, park=False)
    parked.call("no_such_tool", {})  # a refused call counts too
    plain.call("no_such_tool", {})
    assert parked.park()
    assert parked.meta() == plain.meta() and parked.call_counts() == plain.call_counts()
    assert parked.call_counts()[1] >= 1
    assert parked.parked  # still: nothing was rebuilt
    parked.close("deleted")
    with pytest.raises(EpisodeClosed):
        parked.meta()


def test_a_parked_episode_keeps_kilobytes_not_its_template(episode, templates, ledger):
    template = templates.get(ledger, 1, "small")
    a, b = (x["id"] for x in episode.tables()["account"][:2])
    assert episode.park() and episode.size_bytes == 0  # never written: nothing of its own
    episode.call("transfer", {"from_account": a, "to_account": b, "amount": 1})
    assert episode.size_bytes >= len(template)  # open: its whole private database
    assert episode.park()
    assert 0 < episode.size_bytes <= len(template) // 2  # the pages the call changed (a toy template: 13 pages)
    assert not episode.park()  # already parked


def test_episodes_that_cannot_be_parked_say_so_and_stay_usable(episode, ledger):
    foreign = Episode.restore(ledger, episode.snapshot())  # bytes of unknown origin: no base
    assert not foreign.parkable and not foreign.park() and not foreign.parked
    episode.set_progress_handler(lambda: 0, 1000)  # grading in progress
    assert not episode.park()
    episode.set_progress_handler(None, 0)
    assert episode.park()
    fork = episode.fork()  # rebuilds the parent; the fork shares its template as its base
    assert fork.parkable and fork.park() and fork.state_hash() == episode.state_hash()
    episode.park()
    episode.close("deleted")
    with pytest.raises(EpisodeClosed, match="deleted"):
        episode.state_hash()
    assert not episode.park()


def _manager(templates: TemplateCache, ledger, max_active: int) -> EpisodeManager:
    return EpisodeManager(
        templates,
        max_episodes=50,
        ttl_seconds=None,
        max_active=max_active,
        worlds=lambda name: ledger,
        tasks=lambda name: pytest.fail("no tasks here"),
    )


@pytest.mark.anyio
async def test_the_manager_parks_the_least_recently_used_and_mcp_clients_never_notice(ledger, templates):
    manager = _manager(templates, ledger, max_active=2)
    twins = [Episode.create(ledger, seed=0, scale="small", templates=templates) for _ in range(5)]
    episodes = [manager.create(ledger.name, seed=0, scale="small") for _ in range(5)]
    accounts = [a["id"] for a in twins[0].tables()["account"][:2]]
    async with Client(build_server(ledger, manager.get)) as client:
        for round_ in range(2):
            for i, (ep, twin) in enumerate(zip(episodes, twins, strict=True)):
                args = {"from_account": accounts[i % 2], "to_account": accounts[1 - i % 2], "amount": 1 + round_}
                result = await client.call_tool("transfer", args, meta={META_EPISODE: ep.id})  # type: ignore[arg-type]
                assert not result.is_error
                twin.call("transfer", args)
        assert sum(e.parked for e in episodes) == 3 and manager.parks >= 3
        assert [e.id for e in episodes if not e.parked] == [episodes[3].id, episodes[4].id]
        assert manager.live_bytes() < sum(t.size_bytes for t in twins)
        for ep, twin in zip(episodes, twins, strict=True):
            assert ep.state_hash() == twin.state_hash() and ep.transcript() == twin.transcript()
    manager.close()
    assert all(e.closed for e in episodes)


@pytest.mark.anyio
async def test_runner_clients_share_compiled_output_validators(ledger, episode):
    server = build_server(ledger, lambda _id: episode)
    account = episode.tables()["account"][0]["id"]
    validators = []
    for _ in range(2):  # two episodes' clients, one after the other
        async with Client(server) as client:
            share_validators(client)
            result = await client.call_tool("get_account", {"account_id": account})
            assert not result.is_error and result.structured_content["id"] == account
            validators.append(client.session._tool_output_validators["get_account"])
    assert validators[0] is validators[1]  # compiled (and metaschema-checked) once


def test_tool_input_schemas_are_built_once_and_handed_out_as_copies(ledger):
    spec = ledger.tools["transfer"]
    first = spec.input_schema()
    first["properties"].clear()
    assert spec.input_schema()["properties"] and spec.input_schema() == spec.args_model.model_json_schema()
