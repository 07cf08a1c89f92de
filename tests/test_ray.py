"""mcpsim on a real Ray cluster on this machine (`LocalCluster`: a head and two worker nodes of one
CPU each, `ray start` processes on loopback): `serve_on_ray`'s pool of servers behind one endpoint,
driven with the light client; and `run_on_ray` (`mcpsim run --executor ray`), from which a worker
node is killed mid-run: every episode is still in the trajectory file exactly once, with the
rewards and state hashes of a local run. About two minutes on a loaded 2-core machine (most of
it Ray starting its nodes and workers)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import ray  # noqa: F401  (in the test extra: a missing Ray fails this file, never skips it)

from mcpsim.runner.backends import InProcessBackend
from mcpsim.runner.cluster import HostPool, LocalCluster, run_on_ray, serve_on_ray
from mcpsim.runner.run import RunConfig, run_episodes
from mcpsim.serve.host import EpisodeManager
from mcpsim.tasks import load_tasks
from tests.venvs import CLIENT

TASKS = ["gift-card-balance", "add-address-make-default", "cancel-pending-order"]
TRIALS = 3


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster.start(workers=2) as started:
        yield started


def test_a_pool_of_servers_on_ray_answers_behind_one_endpoint(cluster: LocalCluster) -> None:
    sys.path.insert(0, str(CLIENT))
    from mcpsim_client import Client, EpisodeNotFound

    with serve_on_ray("retail", hosts=2, bind="127.0.0.1") as endpoint, Client(endpoint.url, endpoint.token) as client:
        assert len(set(endpoint.nodes)) == 2  # the two hosts are on two nodes
        episodes = [client.create("retail", task="gift-card-balance") for _ in range(4)]
        assert sorted(Counter(endpoint.owners.values()).values()) == [2, 2]  # spread over the hosts
        assert all(e.mcp_url.startswith(endpoint.url + "/episodes/") for e in episodes)  # through the router
        found = client.call_tool(episodes[0], "find_customer_by_email", {"email": "matthew_murphy198@gmail.com"})
        assert found.structured and found.structured["customer_id"] == "cus_1148152"
        fork = client.fork(episodes[0])
        assert endpoint.owners[fork.id] == endpoint.owners[episodes[0].id] and fork.calls == 1
        assert {e.id for e in client.episodes()} == {e.id for e in episodes} | {fork.id}
        client.call_tool(episodes[0], "get_customer_details", {"customer_id": "cus_1148152"})
        answer = "You have $329.73 left on your gift card."
        assert client.verify(episodes[0], answer=answer).reward == 1.0  # graded on its host
        assert client.verify(episodes[1], answer=answer).reward == 0.0  # the right words, no lookup
        assert client.delete(episodes[3]) is True
        with pytest.raises(EpisodeNotFound):
            client.get(episodes[3])


def _local(config: RunConfig) -> dict[str, tuple[float | None, str | None]]:
    async def main() -> None:
        manager = EpisodeManager(config.templates, max_episodes=16, ttl_seconds=None)
        try:
            await run_episodes(config, InProcessBackend(manager), config.make_agent, config.make_user)
        finally:
            manager.close()

    anyio.run(main)
    return _outcomes(config.out)


def _outcomes(out: Path) -> dict[str, tuple[float | None, str | None]]:
    lines = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    keys = Counter(f"{t['task_id']}#{t['trial']}" for t in lines)
    assert set(keys.values()) == {1}, f"episodes written more than once: {keys}"  # exactly once
    return {f"{t['task_id']}#{t['trial']}": (t["reward"], t["state_hash"]) for t in lines}


def test_a_run_survives_a_dead_worker_with_every_episode_once_and_local_hashes(
    cluster: LocalCluster, tmp_path: Path, templates
) -> None:
    retail = load_tasks("retail")
    tasks = [retail.get(t) for t in TASKS]
    local = _local(RunConfig(world="retail", tasks=tasks, out=tmp_path / "local", trials=TRIALS, templates=templates))
    config = RunConfig(
        world="retail", tasks=tasks, out=tmp_path / "ray", trials=TRIALS, concurrency=6, address=cluster.address
    )
    pools: list[HostPool] = []
    done: list[str] = []
    victim = cluster.node_ids["w2"]

    async def kill_when_busy() -> None:
        # once an episode has come back and the victim's host is running some, its node dies
        while not (pools and done and any(pools[0].load[i] for i in pools[0].on_node(victim))):
            await anyio.sleep(0.01)
        cluster.kill("w2", [pools[0].pids[i] for i in pools[0].on_node(victim)])

    async def main() -> object:
        with anyio.fail_after(600):
            async with anyio.create_task_group() as group:
                group.start_soon(kill_when_busy)
                result = await run_on_ray(config, on_start=pools.append, on_progress=lambda t: done.append(t.key))
                group.cancel_scope.cancel()
            return result

    result = anyio.run(main)
    assert cluster.processes["w2"].poll() is not None  # the node was killed during the run
    assert len(set(pools[0].nodes)) == 3 and len(pools[0].on_node(victim)) == 1  # one host per node's core
    assert result.reruns >= 1  # the dead host's episodes ran again elsewhere
    assert not set(pools[0].on_node(victim)) & pools[0].alive
    assert result.ran == len(TASKS) * TRIALS and result.summary.episodes == len(TASKS) * TRIALS
    assert _outcomes(config.out) == local  # every episode once, with the rewards and state hashes of a local run
    assert all(reward == 1.0 for reward, _ in local.values())
