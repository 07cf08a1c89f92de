"""Groups over the control plane: `POST /episodes {"task", "group": G}` creates G episodes of one
task from the same start state, with distinct ids, in one request (a GRPO group), all or none,
within a cap that is refused with the reason."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client

from mcpsim.serve._host import EpisodeLimitReached
from tests.support.verifier_fixtures import ledger_tasks

pytestmark = pytest.mark.anyio


@pytest.fixture
def live(serve_http, ledger, templates):
    return serve_http([ledger], tasks={"ledger": ledger_tasks(ledger, templates)}, max_episodes=10)


async def test_a_group_is_episodes_of_one_task_from_one_start_with_their_own_ids(live, ledger, templates):
    gold = ledger_tasks(ledger, templates).get("pay-and-open").gold
    async with httpx.AsyncClient(base_url=live.url) as http:
        created = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open", "group": 4})
        assert created.status_code == 201, created.text
        group = created.json()["episodes"]
        assert len({e["id"] for e in group}) == 4 and len({e["mcp_url"] for e in group}) == 4
        assert {(e["task"], e["seed"], e["scale"], e["calls"]) for e in group} == {("pay-and-open", 1, "small", 0)}
        hashes = [(await http.get(f"/episodes/{e['id']}/state")).json()["state_hash"] for e in group]
        assert len(set(hashes)) == 1  # the same start state
        listed = {e["id"] for e in (await http.get("/episodes")).json()}
        assert listed == {e["id"] for e in group}
        # each is an episode of its own: the first one solved, the others untouched
        with anyio.fail_after(20):
            async with Client(group[0]["mcp_url"]) as client:
                for action in gold:
                    assert not (await client.call_tool(action.tool, action.args)).is_error
        after = [(await http.get(f"/episodes/{e['id']}/state")).json()["state_hash"] for e in group]
        assert after[0] != hashes[0] and after[1:] == hashes[1:]
        rewards = [
            (await http.post(f"/episodes/{e['id']}/verify", json={"answer": "Sent $20.00; Zoe is set up."})).json()
            for e in group
        ]
        assert [v["reward"] for v in rewards] == [1.0, 0.0, 0.0, 0.0]


async def test_a_group_of_a_world_and_a_group_of_one(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        plain = await http.post("/episodes", json={"world": "ledger", "seed": 3, "scale": "small", "group": 2})
        one = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open", "group": 1})
        single = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})
    assert plain.status_code == one.status_code == single.status_code == 201
    assert [(e["seed"], e["task"]) for e in plain.json()["episodes"]] == [(3, None), (3, None)]
    assert len(one.json()["episodes"]) == 1  # asked as a group: answered as one
    assert "episodes" not in single.json() and single.json()["task"] == "pay-and-open"  # unchanged without


@pytest.mark.parametrize(
    ("group", "fragment"),
    [
        (0, "greater than or equal to 1"),
        (-3, "greater than or equal to 1"),
        ("4", "valid integer"),
        (True, "valid integer"),
        (11, "group of 11 episodes is over the maximum of 10 live on this server"),
    ],
)
async def test_a_bad_group_size_is_refused_with_the_reason(live, group, fragment):
    async with httpx.AsyncClient(base_url=live.url) as http:
        refused = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open", "group": group})
        assert refused.status_code == 422 and fragment in refused.text, refused.text
        assert (await http.get("/episodes")).json() == []  # nothing was created


async def test_a_group_over_the_cap_per_request_is_refused(live):
    live.manager.max_episodes = 1000
    async with httpx.AsyncClient(base_url=live.url) as http:
        refused = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open", "group": 65})
        assert refused.status_code == 422
        assert refused.json()["error"] == "group of 65 episodes is over the maximum of 64 per request"
        assert (await http.get("/episodes")).json() == []


async def test_a_group_that_does_not_fit_now_gets_503_and_creates_nothing(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        held = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open", "group": 7})).json()
        refused = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open", "group": 4})
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        assert "a group of 4 episodes does not fit: this server holds 7 of its maximum of 10" in refused.text
        assert len((await http.get("/episodes")).json()) == 7  # none of the four
        fits = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open", "group": 3})
        assert fits.status_code == 201 and len(held["episodes"]) + len(fits.json()["episodes"]) == 10


def test_a_group_that_fails_part_way_leaves_no_episode(live):
    """All or none: when one episode of the group cannot be made, those made are deleted."""
    manager = live.manager
    made: list[str] = []

    def make():
        if len(made) == 2:
            raise EpisodeLimitReached("stand-in for a cap met meanwhile")
        episode = manager.create("ledger", task="pay-and-open")
        made.append(episode.id)
        return episode

    with pytest.raises(EpisodeLimitReached, match="stand-in"):
        manager.create_group(4, make)
    assert len(made) == 2 and len(manager) == 0
    assert "its group could not be completed" in manager.gone_message(made[0])
