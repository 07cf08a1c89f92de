"""Flags (simulator bugs), the freeze and the verdict live in the episode's database, so every
path that moves an episode as bytes keeps them: snapshot and restore, fork, the control plane,
and the stdio backend's `mcpsim verify --snapshot`. A restored flagged episode never passes."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest
from mcp import Client

from mcpsim.engine import _store as store
from mcpsim.engine._episode import Episode
from mcpsim.grading import Verifier
from mcpsim.tasks import load_tasks
from mcpsim.tasks._scenario import gold_steps, oracle_answer, run_actions, run_solution, task_episode
from mcpsim.world._registry import load_world
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv, verify_args
from tests.support.verifier_fixtures import ledger_tasks

pytestmark = pytest.mark.anyio


@pytest.fixture
def verifier(ledger, templates):
    return Verifier(ledger, ledger_tasks(ledger, templates), templates=templates)


def flagged_gold_episode(verifier) -> tuple[Episode, object]:
    """The gold solution of a ledger task, plus a call that hits the ledger's deliberate bug."""
    task = verifier.tasks.get("pay-and-open")
    ep = task_episode(verifier.world, task, templates=verifier.templates)
    run_actions(ep, task.gold)
    result = ep.call("close_account_buggy", {"account_id": task.gold[0].args["account_id"]})
    assert result.bug and ep.flagged
    return ep, task


def test_a_restored_flagged_episode_stays_flagged_and_never_passes(verifier):
    ep, task = flagged_gold_episode(verifier)
    restored = Episode.restore(verifier.world, ep.snapshot(), id="restored")
    assert restored.flags == ep.flags and "KeyError" in restored.flags[0]
    verdict = verifier.grade(restored, task, oracle_answer(task))
    assert not verdict.passed and verdict.reward == 0 and "simulator bug" in verdict.failure


def test_a_fork_keeps_the_flag_and_the_freeze(verifier):
    ep, task = flagged_gold_episode(verifier)
    fork = ep.fork(id="fork")
    assert fork.flagged
    assert not verifier.grade(fork, task, oracle_answer(task)).passed
    clean = task_episode(verifier.world, task, templates=verifier.templates)
    clean.end()
    frozen_fork = clean.fork(id="frozen-fork")
    assert frozen_fork.ended
    refused = frozen_fork.call("open_account", {"owner": "After The End"})
    assert refused.is_error and "ended" in refused.error


def test_the_verdict_and_the_freeze_travel_with_the_snapshot(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = task_episode(verifier.world, task, templates=verifier.templates)
    run_actions(ep, task.gold)
    verdict = verifier.grade(ep, task, oracle_answer(task))
    copy = Episode.restore(verifier.world, ep.snapshot(), id="copy")
    assert copy.ended and copy.verdict == verdict.model_dump(mode="json")
    assert copy.call("open_account", {"owner": "Late"}).is_error


async def test_the_control_plane_fork_of_a_flagged_or_ended_episode_keeps_both(serve_http, ledger):
    live = serve_http([ledger])
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        r = await http.post("/episodes", json={"world": "ledger", "seed": 2, "scale": "small"})
        ep = r.json()
        state = (await http.get(f"/episodes/{ep['id']}/state")).json()
        account = state["tables"]["account"][0]["id"]
        async with Client(ep["mcp_url"]) as client:
            assert (await client.call_tool("close_account_buggy", {"account_id": account})).is_error
        await http.post(f"/episodes/{ep['id']}/end")
        fork = (await http.post(f"/episodes/{ep['id']}/fork")).json()
        info = (await http.get(f"/episodes/{fork['id']}")).json()
        assert info["flagged"] is True and info["ended"] is True and "KeyError" in info["flags"][0]
        async with Client(fork["mcp_url"]) as client:
            write = await client.call_tool("open_account", {"owner": "Fork Writer"})
        assert write.is_error and "ended" in write.content[0].text


def test_mcpsim_verify_of_a_flagged_snapshot_fails_closed(tmp_path, templates):
    """What the stdio backend does: the server writes its database on exit and `mcpsim verify`
    grades it. Retail has no buggy tool, so the flag is planted as a tool bug would write it."""
    world, tasks = load_world("retail"), load_tasks("retail")
    task = next(t for t in tasks.tasks if t.id == "cancel-pending-order")
    ep = task_episode(world, task, templates=templates)
    conversation = tmp_path / "conversation.json"  # the policy's confirmation turn is graded too
    conversation.write_text(json.dumps(run_solution(ep, task, gold_steps(task, world))))
    store.write_meta(ep.conn, {"flags": ["call 2 to cancel_order raised KeyError: planted"]})
    path = tmp_path / "final.sqlite"
    path.write_bytes(ep.snapshot())

    def verify(snapshot) -> tuple[int, dict]:
        out = subprocess.run(
            mcpsim_argv(*verify_args("retail", task, snapshot, conversation)),
            env=CLEAN_ENV,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return out.returncode, json.loads(out.stdout)

    code, verdict = verify(path)
    assert code == 1 and verdict["reward"] == 0 and "simulator bug" in verdict["failure"]
    clean = tmp_path / "clean.sqlite"
    store.write_meta(ep.conn, {"flags": []})
    clean.write_bytes(ep.snapshot())
    code, verdict = verify(clean)
    assert code == 0 and verdict["reward"] == 1.0  # the same state without the flag passes
