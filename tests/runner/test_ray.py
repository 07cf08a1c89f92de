"""mcpsim on a real Ray cluster on this machine (`LocalCluster`: a head and two worker nodes of one
CPU each, `ray start` processes on loopback): `serve_on_ray`'s pool of servers behind one endpoint,
driven with the light client; and `run_on_ray` (`mcpsim run --executor ray`), from which a worker
node is killed mid-run: every episode is still in the trajectory file exactly once, with the
rewards and state hashes of a local run. About two minutes on a loaded 2-core machine (most of
it Ray starting its nodes and workers). Then, with no cluster (a few seconds): the router in front
of mcpsim servers on loopback (a dead host, ties, event streams), the host pool with stand-in
actors (an episode that kills its hosts, a host unreachable for a while), and the configuration."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
import ray  # in the test extra: a missing Ray fails this file, never skips it
import yaml

from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.catalogue._loading import ShippedSpec, register_shipped, shipped_folder
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._cluster import (
    HostPool,
    LocalCluster,
    RayEndpoint,
    ServerHost,
    _kill_all,
    _router,
    run_on_ray,
    serve_on_ray,
    worker_env,
)
from mcpsim.runner._run import Job, RunConfig, run_episodes
from mcpsim.runner._settings import RolloutSettings
from mcpsim.serve._app import serve_in_thread
from mcpsim.serve._host import EpisodeManager
from mcpsim.specs._compiler import compile_spec
from mcpsim.taskgen._generator import generate_tasks, task_set
from mcpsim.tasks import load_tasks
from mcpsim.trajectories._records import Trajectory
from tests.conftest import CLEAN_ENV, MCP_INITIALIZE, free_port
from tests.support.commands import mcpsim_argv
from tests.support.venvs import CLIENT

TASKS = ["gift-card-balance", "add-address-make-default", "cancel-pending-order"]
TRIALS = 3


def own_address() -> str | None:
    """An IPv4 address of this machine other than loopback that it can listen on, as `hostname -I`
    or the host's name resolves (None: it has none)."""
    found: list[str] = []
    try:
        found += subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        found += socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        pass
    for address in found:
        if "." not in address or address.startswith("127."):
            continue
        try:
            with socket.socket() as s:
                s.bind((address, 0))
        except OSError:
            continue
        return address
    return None


OWN_ADDRESS = own_address()


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # the nodes on this machine's own address when it has one, as machines of a real cluster are
    with LocalCluster.start(workers=2, ip=OWN_ADDRESS or "127.0.0.1") as started:
        yield started


@pytest.mark.system
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


@pytest.mark.system
@pytest.mark.skipif(OWN_ADDRESS is None, reason="this machine has no IPv4 address but loopback to listen on")
def test_a_pool_of_servers_on_the_nodes_addresses_answers_without_bind(cluster: LocalCluster) -> None:
    """Without `bind=` each host listens on its node's address (not loopback) and is reached
    there; the router forwards its client's Host header, which the hosts serve (the router's URL)."""
    sys.path.insert(0, str(CLIENT))
    from mcpsim_client import Client

    with serve_on_ray("retail", hosts=2) as endpoint, Client(endpoint.url, endpoint.token) as client:
        assert {urlsplit(h).hostname for h in endpoint.hosts} == {cluster.ip} != {"127.0.0.1"}
        episode = client.create("retail", task="gift-card-balance")
        assert episode.mcp_url.startswith(endpoint.url + "/episodes/")
        found = client.call_tool(episode, "find_customer_by_email", {"email": "matthew_murphy198@gmail.com"})
        client.call_tool(episode, "get_customer_details", {"customer_id": "cus_1148152"})
        assert found.structured and found.structured["customer_id"] == "cus_1148152"
        assert client.verify(episode, answer="You have $329.73 left on your gift card.").reward == 1.0
        auth = {"authorization": f"Bearer {endpoint.token}"}
        for host in endpoint.hosts:  # each host answers at its own address too
            assert httpx.get(f"{host}/episodes", headers=auth, timeout=60).status_code == 200
        # a name the hosts do not serve is refused through the router (DNS-rebinding protection)
        evil = httpx.get(f"{endpoint.url}/episodes", headers={**auth, "host": "evil.example"}, timeout=60)
        assert evil.status_code == 403 and "evil.example" in evil.json()["error"]


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


@pytest.mark.system
def test_a_run_survives_a_dead_worker_with_every_episode_once_and_local_hashes(
    cluster: LocalCluster, tmp_path: Path, templates, monkeypatch: pytest.MonkeyPatch
) -> None:
    retail = load_tasks("retail")
    tasks = [retail.get(t) for t in TASKS]
    local = _local(RunConfig(world="retail", tasks=tasks, out=tmp_path / "local", trials=TRIALS, templates=templates))
    # the agents' key variable, set in this process only (the nodes started without it)
    monkeypatch.setenv("MCPSIM_RAY_TEST_KEY", "not-a-real-key")
    config = RunConfig(
        world="retail",
        tasks=tasks,
        out=tmp_path / "ray",
        trials=TRIALS,
        concurrency=6,
        address=cluster.address,
        api_key_env="MCPSIM_RAY_TEST_KEY",
    )
    pools: list[HostPool] = []
    keyed: list[bool] = []

    def started(pool: HostPool) -> None:
        pools.append(pool)
        keyed.extend(ray.get([a.has.remote("MCPSIM_RAY_TEST_KEY") for a in pool.actors]))

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
                result = await run_on_ray(config, on_start=started, on_progress=lambda t: done.append(t.key))
                group.cancel_scope.cancel()
            return result

    result = anyio.run(main)
    assert cluster.processes["w2"].poll() is not None  # the node was killed during the run
    assert keyed == [True] * 3  # every worker got the driver's key variable
    assert len(set(pools[0].nodes)) == 3 and len(pools[0].on_node(victim)) == 1  # one host per node's core
    assert result.reruns >= 1  # the dead host's episodes ran again elsewhere
    assert not set(pools[0].on_node(victim)) & pools[0].alive
    assert result.ran == len(TASKS) * TRIALS and result.summary.episodes == len(TASKS) * TRIALS
    assert _outcomes(config.out) == local  # every episode once, with the rewards and state hashes of a local run
    assert all(reward == 1.0 for reward, _ in local.values())


@pytest.mark.system
def test_a_spec_world_loaded_by_the_cli_runs_on_the_ray_workers(cluster: LocalCluster, tmp_path: Path) -> None:
    """`mcpsim run NAME --world-spec FILE --executor ray`: the world lives only in the driver's
    process (compiled from the spec, never installed), so the run ships the spec and its task
    file to the workers, which compile and register it before their first episode; every
    episode passes there as it does locally."""
    spec = expand(blueprints()["library"], 1, name="raylibrary").model_copy(update={"generated_tasks": 0})
    compiled = compile_spec(spec)
    tasks = generate_tasks(compiled, count=2, seed=0)
    folder = tmp_path / "specs"  # the worker nodes are given the texts, not this path
    folder.mkdir()
    path = folder / "raylibrary.yaml"
    path.write_text(yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=True), sort_keys=False))
    written = task_set(compiled, tasks).files[0].model_dump(mode="json", exclude_defaults=True)
    (folder / "raylibrary.tasks.yaml").write_text(yaml.safe_dump(written, sort_keys=False))
    out = tmp_path / "run"
    argv = mcpsim_argv("run", "raylibrary", "--world-spec", str(path), "--executor", "ray")
    argv += ["--address", cluster.address, "--out", str(out), "--concurrency", "2", "--no-cache"]
    done = subprocess.run(argv, capture_output=True, text=True, env=CLEAN_ENV, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [Trajectory.model_validate_json(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sorted(t.task_id for t in lines) == sorted(t.id for t in tasks)
    assert all(t.reward == 1.0 and t.error is None for t in lines), [(t.task_id, t.reward, t.error) for t in lines]


def test_shipped_specs_are_written_once_per_content_and_reused(tmp_path: Path, monkeypatch) -> None:
    """Every worker registers the shipped specs: they go to one folder named after their content
    (not a new temporary folder per worker, left behind when Ray kills the actor), which later
    workers and runs reuse; the world's tasks load from it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    spec = expand(blueprints()["library"], 1, name="shiplibrary").model_copy(update={"generated_tasks": 0})
    compiled = compile_spec(spec)
    written = task_set(compiled, generate_tasks(compiled, count=2, seed=0)).files[0]
    text = yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=True), sort_keys=False)
    tasks = yaml.safe_dump(written.model_dump(mode="json", exclude_defaults=True), sort_keys=False)
    shipped = [ShippedSpec("shiplibrary.yaml", text, tasks)]
    first = register_shipped(shipped)
    folder = shipped_folder(shipped)
    stamp = (folder / "0" / "shiplibrary.yaml").stat().st_mtime_ns
    again = register_shipped(shipped)  # a second worker on the machine, or a later run
    assert [w.name for w in first] == [w.name for w in again] == ["shiplibrary"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]  # one folder, nothing else
    assert folder.stat().st_mode & 0o077 == 0 and str(os.getuid()) in folder.name  # this user's alone
    assert sorted(p.name for p in (folder / "0").iterdir()) == ["shiplibrary.tasks.yaml", "shiplibrary.yaml"]
    assert (folder / "0" / "shiplibrary.yaml").stat().st_mtime_ns == stamp  # the same text is not written again
    assert [t.id for t in load_tasks("shiplibrary").tasks] == [t.id for t in written.tasks]
    other = [ShippedSpec("shiplibrary.yaml", text, None)]  # other content: a folder of its own
    register_shipped(other)
    assert shipped_folder(other) != folder and len(list(tmp_path.iterdir())) == 2


# -- no cluster: the router in front of mcpsim servers on loopback, the host pool with stand-in actors --

LEDGER = {"world": "ledger", "seed": 1, "scale": "small"}


@contextmanager
def _routed(*hosts: str) -> Iterator[tuple[RayEndpoint, httpx.Client]]:
    """A router (as `serve_on_ray` starts one) in front of `hosts`, and a client of it."""
    endpoint = RayEndpoint("", None, list(hosts), ["node"] * len(hosts), {})
    with serve_in_thread(_router(endpoint)) as url, httpx.Client(base_url=url) as http:
        endpoint.url = url
        yield endpoint, http


def test_the_router_sends_new_episodes_past_a_dead_host(serve_http, ledger) -> None:
    live = serve_http([ledger])
    with _routed(f"http://127.0.0.1:{free_port()}", live.url) as (endpoint, http):  # nothing listens on host 0
        endpoint.owners["ghost"] = 0  # an episode the dead host held
        created = [http.post("/episodes", json=LEDGER) for _ in range(3)]
        assert [r.status_code for r in created] == [201] * 3, created[0].text
        assert endpoint.dead == {0} and set(endpoint.owners.values()) == {1}  # every one on the live host
        assert http.get("/health").status_code == 200  # the rest goes to the first live host
        assert {e["id"] for e in http.get("/episodes").json()} == {r.json()["id"] for r in created}
        gone = http.get("/episodes/ghost")
        assert gone.status_code == 502 and "host 0" in gone.json()["error"]  # its episode died with it


def test_the_router_answers_502_when_no_host_is_left() -> None:
    with _routed(f"http://127.0.0.1:{free_port()}") as (endpoint, http):
        refused = http.post("/episodes", json=LEDGER)
        assert refused.status_code == 502 and "none of the episode servers" in refused.json()["error"]
        assert endpoint.dead == {0}


def test_the_router_breaks_ties_between_hosts_in_turn(serve_http, ledger) -> None:
    live = serve_http([ledger])
    with _routed(live.url, live.url) as (endpoint, http):  # two hosts (one server twice): always a tie
        chosen = []
        for _ in range(4):
            episode = http.post("/episodes", json=LEDGER).json()["id"]
            chosen.append(endpoint.owners[episode])
            assert http.delete(f"/episodes/{episode}").status_code == 204
        assert sorted(chosen) == [0, 0, 1, 1]


def test_the_router_creates_a_group_on_one_host_and_routes_each_of_its_episodes(serve_http, ledger) -> None:
    first, second = serve_http([ledger]), serve_http([ledger])
    with _routed(first.url, second.url) as (endpoint, http):
        single = http.post("/episodes", json=LEDGER).json()["id"]  # on host 0: the group goes to host 1
        group = http.post("/episodes", json={**LEDGER, "group": 3})
        assert group.status_code == 201, group.text
        ids = [e["id"] for e in group.json()["episodes"]]
        assert endpoint.owners == {single: 0} | dict.fromkeys(ids, 1) and len(second.manager) == 3
        assert all(http.get(f"/episodes/{i}").status_code == 200 for i in ids)
        assert http.delete(f"/episodes/{ids[0]}").status_code == 204 and ids[0] not in endpoint.owners


def test_the_router_streams_an_mcp_event_stream_through(serve_http, ledger) -> None:
    live = serve_http([ledger])
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with _routed(live.url) as (endpoint, http):
        episode = http.post("/episodes", json=LEDGER).json()["id"]
        mcp = f"/episodes/{episode}/mcp"
        init = http.post(mcp, headers=accept, json=MCP_INITIALIZE)
        assert init.status_code == 200 and init.headers["mcp-session-id"], init.text
        session = {"mcp-protocol-version": "2025-06-18", "mcp-session-id": init.headers["mcp-session-id"]}
        notified = http.post(
            mcp, headers={**accept, **session}, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        assert notified.status_code == 202, notified.text
        # the session's event stream never ends on its own: a router that waited for the whole
        # answer would send nothing (and this read would time out)
        with http.stream("GET", mcp, headers={"accept": "text/event-stream", **session}, timeout=60) as events:
            assert events.status_code == 200
            assert events.headers["content-type"].startswith("text/event-stream")
            assert events.headers["mcp-session-id"] == session["mcp-session-id"]
            # while it is open, the session's requests still go through
            tools = http.post(
                mcp, headers={**accept, **session}, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            )
            assert tools.status_code == 200 and tools.json()["result"]["tools"], tools.text
            assert http.delete(mcp, headers=session).status_code == 200  # ends the session and its stream


@pytest.mark.skipif(OWN_ADDRESS is None, reason="this machine has no IPv4 address but loopback to listen on")
def test_a_server_host_on_the_machines_address_answers_through_the_router(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ServerHost` as its actor runs it, on a node whose address is this machine's own (no
    cluster): it listens there, the router forwards its clients' Host (the router's own name), and
    the host serves its own address as well, and nothing else."""
    monkeypatch.setattr(ray.util, "get_node_ip_address", lambda: OWN_ADDRESS)
    endpoint = RayEndpoint("", "tok", [], ["node"], {})
    with serve_in_thread(_router(endpoint)) as url, httpx.Client(base_url=url, timeout=60) as http:
        endpoint.url = url
        settings = {"world": "retail", "only": ["retail"], "token": "tok", "public_url": url, "ttl_seconds": None}
        host = ServerHost(settings, None)
        try:
            endpoint.hosts = [host.url()]
            assert urlsplit(host.url()).hostname == OWN_ADDRESS
            auth = {"authorization": "Bearer tok"}
            created = http.post("/episodes", json={"world": "retail", "scale": "small"}, headers=auth)
            assert created.status_code == 201, created.text
            assert created.json()["mcp_url"].startswith(url + "/episodes/")
            assert http.get(f"/episodes/{created.json()['id']}", headers=auth).status_code == 200
            direct = httpx.get(f"{host.url()}/episodes", headers=auth, timeout=60)  # by its own address
            assert direct.status_code == 200 and len(direct.json()) == 1
            job = http.post("/jobs", json={"tasks": ["gift-card-balance"], "trials": 2}, headers=auth)
            assert [line.get("reward") for line in map(json.loads, job.text.splitlines())] == [1.0, 1.0, None]
            for name in ("evil.example", f"{OWN_ADDRESS}:1"):  # other names: refused through the router
                refused = http.get("/episodes", headers={**auth, "host": name})
                assert refused.status_code == 403 and name in refused.json()["error"], refused.text
        finally:
            host._stack.close()


class _Crash(Exception):
    """Stands for Ray's errors, which the pool tells apart by name."""


RayActorError = type("RayActorError", (_Crash,), {})
ActorUnavailableError = type("ActorUnavailableError", (RayActorError,), {})


class _Call:
    """`remote()` answers from `outcomes` (an exception to raise, or a value), the last one again
    when they run out."""

    def __init__(self, outcomes: list[object]) -> None:
        self.outcomes = outcomes
        self.calls = 0

    async def remote(self, *args: object) -> object:
        self.calls += 1
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome.model_dump_json() if isinstance(outcome, Trajectory) else outcome


class _Actor:
    """A stand-in for an episode host's actor handle: `run.remote(job)` and `where.remote()`."""

    def __init__(self, *runs: object, where: tuple[object, ...] = (("node", 1),)) -> None:
        self.run, self.where = _Call(list(runs)), _Call(list(where))


def _pool(tmp_path: Path, *actors: _Actor) -> tuple[HostPool, Job]:
    task = load_tasks("retail").get("gift-card-balance")
    config = RunConfig(world="retail", tasks=[task], out=tmp_path)
    pool = HostPool(config, actors=list(actors), alive=set(range(len(actors))), pause=0.0)
    pool.load = dict.fromkeys(pool.alive, 0)
    return pool, Job(task, 0, None, RolloutSettings(run_id="r1"))


def _done(job: Job) -> Trajectory:
    return Trajectory(
        run_id="r1",
        world="retail",
        world_version="1",
        task_id=job.task.id,
        trial=0,
        agent="oracle",
        status="completed",
        termination="answered",
        reward=1.0,
    )


def test_an_episode_that_kills_its_hosts_is_recorded_as_failed_not_run_on_every_host(tmp_path: Path) -> None:
    pool, job = _pool(tmp_path, *(_Actor(RayActorError("worker died")) for _ in range(5)))
    trajectory, snapshot = anyio.run(pool.run, job, anyio.Event())
    assert snapshot is None and trajectory.termination == "server_error" and trajectory.run_id == "r1"
    assert "lost 3 times" in (trajectory.error or "")
    assert pool.reruns == pool.max_reruns == 2 and len(pool.alive) == 2  # three hosts lost, not all five


def test_a_host_unreachable_for_a_moment_is_probed_and_kept_not_given_up(tmp_path: Path) -> None:
    actor = _Actor(ActorUnavailableError("reconnecting"), None, where=(ActorUnavailableError("still"), ("node", 1)))
    pool, job = _pool(tmp_path, actor)
    actor.run.outcomes[-1] = _done(job)
    trajectory, _ = anyio.run(pool.run, job, anyio.Event())
    assert trajectory.status == "completed" and pool.alive == {0} and not pool.resting
    assert actor.run.calls == 2 and actor.where.calls == 2 and pool.reruns == 1  # probed twice, then run again
    # unreachable every time: given up after max_unavailable probes, its episode run on another host
    pool, job = _pool(
        tmp_path, _Actor(ActorUnavailableError("gone"), where=(ActorUnavailableError("gone"),)), _Actor(_done(job))
    )
    trajectory, _ = anyio.run(pool.run, job, anyio.Event())
    assert trajectory.status == "completed" and pool.alive == {1} and pool.reruns == 1
    assert pool.actors[0].where.calls == pool.max_unavailable
    # a probe Ray answers with the actor's death ends at once
    pool, job = _pool(
        tmp_path, _Actor(ActorUnavailableError("gone"), where=(RayActorError("died"),)), _Actor(_done(job))
    )
    anyio.run(pool.run, job, anyio.Event())
    assert pool.alive == {1} and pool.actors[0].where.calls == 1


def test_the_workers_get_the_api_key_variables_and_only_them(tmp_path: Path) -> None:
    environ = {"OPENAI_API_KEY": "k1", "JUDGE_KEY": "k2", "OTHER_SECRET": "s"}
    config = RunConfig(world="retail", tasks=[], out=tmp_path, agent="openai:m", user_api_key_env="JUDGE_KEY")
    assert worker_env(config, environ) == {"JUDGE_KEY": "k2", "OPENAI_API_KEY": "k1"}
    assert worker_env(RunConfig(world="retail", tasks=[], out=tmp_path), {}) == {}  # unset: not sent


def test_run_config_takes_the_seed_of_its_settings_and_refuses_a_run_id(tmp_path: Path) -> None:
    config = RunConfig(world="retail", tasks=[], out=tmp_path, settings=RolloutSettings(max_steps=3, seed=7))
    assert (config.max_steps, config.seed) == (3, 7)
    with pytest.raises(ValueError, match="run_id"):
        RunConfig(world="retail", tasks=[], out=tmp_path, settings=RolloutSettings(run_id="mine"))
    with pytest.raises(ValueError, match="seed"):
        RunConfig(world="retail", tasks=[], out=tmp_path, seed=5, settings=RolloutSettings(seed=7))


def test_every_actor_is_killed_even_when_one_kill_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    killed: list[str] = []

    def kill(actor: str) -> None:
        if actor == "gone":
            raise ValueError("no such actor")
        killed.append(actor)

    monkeypatch.setattr(ray, "kill", kill)
    _kill_all(["a", "gone", "b"])
    assert killed == ["a", "b"]
