"""mcpsim on a Ray cluster, for runs and trainers that already schedule their work with Ray.

- `run_on_ray` (`mcpsim run --executor ray [--address ADDR]`): one `EpisodeHost` actor per core
  of the cluster, each with an episode manager of its own, runs whole episodes (agent, user,
  grading) and sends back their trajectories, which this process writes to the run's one
  trajectory file as they come (the same bookkeeping as a local run: `run.schedule`). When a
  worker dies, the episodes it was running are started again on another host: none is lost, and
  none is written twice, since only a finished episode's trajectory ever comes back. Episodes
  are deterministic, so the rewards and state hashes are those of a local run.
- `serve_on_ray`: an mcpsim HTTP server for trainers, as a pool of `ServerHost` actors (each a
  whole `mcpsim serve --http` on its node) behind one endpoint, a router in this process that
  sends each new episode to the least loaded host and every later request on it (control plane
  and MCP) to the host that holds it; a host that cannot be reached is dropped, and new episodes
  go to the others.

Ray is imported here only, when one of these starts: `mcpsim` itself never imports it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog

# serve's names load on first use (its `__init__`, PEP 562): `mcpsim --help` imports the runner, not the server
from mcpsim import serve
from mcpsim.engine import TemplateCache
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._jobs import ServerJobs
from mcpsim.runner._ray_endpoint import RayEndpoint
from mcpsim.runner._run import Job, RunError, RunResult, failed_trajectory, run_episode, schedule
from mcpsim.runner._settings import RunConfig
from mcpsim.trajectories import Trajectory

log = structlog.get_logger("mcpsim.runner")

# What a call on an actor raises when the actor, its worker process or its node died.
_LOST = ("RayActorError", "WorkerCrashedError", "NodeDiedError", "ObjectLostError")
# What it raises when the actor is only unreachable for now (its node is busy or reconnecting):
# a subclass of RayActorError, not a death.
_UNAVAILABLE = "ActorUnavailableError"


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RunError("Ray is not installed: pip install 'mcpsim[ray]' (or ray)") from None
    return ray


def connect(address: str | None) -> bool:
    """Join the Ray cluster at `address` (None: RAY_ADDRESS, else a new local one) unless this
    process already has; True when this call connected (the caller disconnects)."""
    ray = _ray()
    if ray.is_initialized():
        return False
    ray.init(address=address, include_dashboard=False, configure_logging=False, log_to_driver=False)
    return True


def _kinds(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def _lost(exc: BaseException) -> bool:
    return bool(_kinds(exc) & set(_LOST)) and not _unavailable(exc)


def _unavailable(exc: BaseException) -> bool:
    return _UNAVAILABLE in _kinds(exc)


def _kill_all(actors: Sequence[Any]) -> None:
    """`ray.kill` every actor, whatever becomes of the others (one may be gone with its node)."""
    ray = _ray()
    for actor in actors:
        try:
            ray.kill(actor)
        except Exception:  # already gone with its node
            pass


def worker_env(config: RunConfig, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables the run's agent and user read their API keys from (`api_key_env`,
    `user_api_key_env`), with their values in this process (`environ`: os.environ): the workers
    make the agents, and a worker's environment is its node's, not the driver's. Only these."""
    environ = os.environ if environ is None else environ
    names = {config.api_key_env, config.user_api_key_env or config.api_key_env}
    return {name: environ[name] for name in sorted(names) if name in environ}


class EpisodeHost:
    """A Ray actor's body: an episode manager of its own (MCP in memory, the templates built once
    per worker) that runs whole episodes of the run's world with the run's agent and user."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        if config.worker_setup is not None:  # the driver's spec worlds, registered in this worker
            config.worker_setup()
        manager = serve.EpisodeManager(
            TemplateCache(config.cache_dir), max_episodes=config.concurrency + 8, ttl_seconds=None
        )
        manager.worlds(config.world)  # a world this worker lacks fails here, not in every episode
        self.backend = InProcessBackend(manager)

    def where(self) -> tuple[str, int]:
        """The Ray node this host runs on, and its process id."""
        return str(_ray().get_runtime_context().get_node_id()), os.getpid()

    def has(self, name: str) -> bool:
        """Whether the environment variable `name` is set in this worker (never its value)."""
        return name in os.environ

    async def run(self, job: Job) -> str:
        """The job's episode to its end, as its trajectory's JSON."""
        config = self.config
        agent, user = config.make_agent(), config.make_user(job.task)
        trajectory, _ = await run_episode(config, job, self.backend, agent, user, anyio.Event())
        return trajectory.model_dump_json()


@dataclass
class HostPool:
    """The run's episode hosts, one per core of the cluster (or `hosts`), each running up to
    its share of `config.concurrency` episodes at once. A job is run again on another host when
    its host dies, at most `max_reruns` times (then it is recorded as failed: its episode may be
    what kills them). A host Ray finds only unreachable for now gets no episodes while it is
    probed, `max_unavailable` times at most after pauses of `pause` seconds growing each time:
    it is back if it answers, given up if not; its episodes run again elsewhere meanwhile."""

    config: RunConfig
    hosts: int | None = None
    reruns: int = 0
    actors: list[Any] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)  # each host's Ray node
    pids: list[int] = field(default_factory=list)  # each host's process on its node
    alive: set[int] = field(default_factory=set)
    load: dict[int, int] = field(default_factory=dict)
    max_reruns: int = 2
    pause: float = 1.0
    max_unavailable: int = 5
    resting: set[int] = field(default_factory=set)  # hosts found unreachable, being probed

    def start(self) -> HostPool:
        ray = _ray()
        count = self.hosts or int(ray.cluster_resources().get("CPU", 0))
        if count < 1:
            raise RunError("the Ray cluster has no CPU to host episodes on")
        share = -(-self.config.concurrency // count)
        options: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0, "max_concurrency": share}
        if env := worker_env(self.config):  # the agents are made on the workers
            options["runtime_env"] = {"env_vars": env}
        actor = ray.remote(EpisodeHost).options(scheduling_strategy="SPREAD", **options)
        spec = dataclasses.replace(self.config, templates=None)  # each worker builds its own
        self.actors = [actor.remote(spec) for _ in range(count)]
        try:
            self.nodes, self.pids = map(list, zip(*ray.get([a.where.remote() for a in self.actors]), strict=True))
        except Exception as exc:
            self.stop()
            raise RunError(f"the Ray workers could not host {self.config.world} episodes: {exc}") from None
        self.alive = set(range(count))
        self.load = dict.fromkeys(range(count), 0)
        log.info("episode hosts ready", hosts=count, nodes=len(set(self.nodes)), per_host=share)
        return self

    async def run(self, job: Job, stop: anyio.Event) -> tuple[Trajectory, bytes | None]:
        """The job's episode on the least loaded live host; again on another one if its host dies
        or cannot be reached."""
        lost = waits = 0
        while True:
            if not self.alive:
                raise RunError("every Ray episode host died; finish the run with --resume")
            ready = self.alive - self.resting
            if not ready:  # every host left is being probed: wait for the probes
                await anyio.sleep(self.pause)
                continue
            index = min(ready, key=lambda i: (self.load[i], i))
            self.load[index] += 1
            try:
                text = await self.actors[index].run.remote(job)
            except Exception as exc:
                if not _lost(exc) and not _unavailable(exc):
                    raise
                error = exc
            else:
                return Trajectory.model_validate_json(text), None
            finally:
                self.load[index] -= 1
            if _unavailable(error):  # maybe only for now: the host rests until a probe tells
                waits += 1
                if index not in self.resting:
                    await self._probe(index, error)
            else:
                lost += 1
                self._lose(index, error)
            if lost > self.max_reruns or waits > self.max_unavailable:
                log.warning("episode lost its host too often; recorded as failed", task=job.task.id, trial=job.trial)
                failure = RunError(f"its Ray episode host was lost {lost + waits} times running it (last: {error})")
                return failed_trajectory(
                    self.config.world, job.task, job.trial, self.config.agent, job.settings.run_id, failure
                ), None
            self.reruns += 1

    async def _probe(self, index: int, error: BaseException) -> None:
        """Rest the host `index`, which Ray said is unreachable for now, while asking it where it
        runs, after a pause growing each time, at most `max_unavailable` times: it is back when
        it answers, lost when Ray says it died or it never answers."""
        log.warning("episode host unreachable; probing it", host=index, error=str(error)[:200])
        self.resting.add(index)
        try:
            for attempt in range(1, self.max_unavailable + 1):
                await anyio.sleep(self.pause * attempt)
                try:
                    await self.actors[index].where.remote()
                    return
                except Exception as exc:
                    if not _lost(exc) and not _unavailable(exc):
                        raise
                    error = exc
                    if _lost(exc):
                        break
            self._lose(index, error)
        finally:
            self.resting.discard(index)

    def _lose(self, index: int, error: BaseException) -> None:
        if index in self.alive:
            self.alive.discard(index)
            log.warning("episode host lost; its episodes run again elsewhere", host=index, error=str(error)[:200])

    def on_node(self, node: str) -> list[int]:
        """The hosts on the Ray node `node`."""
        return [i for i, n in enumerate(self.nodes) if n == node]

    def stop(self) -> None:
        _kill_all(self.actors)


async def run_on_ray(
    config: RunConfig,
    *,
    hosts: int | None = None,
    on_progress: Callable[[Trajectory], None] | None = None,
    on_start: Callable[[HostPool], None] | None = None,
) -> RunResult:
    """Run `config`'s episodes on the Ray cluster at `config.address` (see the module's doc).
    `hosts`: how many episode hosts (default: one per CPU of the cluster); `on_start` sees the
    pool once every host is ready. --keep-first is not supported (a remote episode cannot be
    suspended mid-way yet)."""
    if config.keep_first is not None:
        raise RunError("--keep-first is not supported with --executor ray")
    connected = connect(config.address)
    try:
        pool = HostPool(config, hosts).start()
        try:
            if on_start is not None:
                on_start(pool)
            return await schedule(config, pool.run, on_progress=on_progress, reruns=lambda: pool.reruns)
        finally:
            pool.stop()
    finally:
        if connected:
            _ray().shutdown()


# -- a server on Ray: a pool of mcpsim servers behind one endpoint -----------------------------------


# what a host allows besides its own address when `allowed_hosts` is not among the settings
_LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")


class ServerHost:
    """A Ray actor's body: a whole mcpsim HTTP server (both planes) on the actor's node, whose
    episodes' MCP URLs point at the router (`public_url`), and which runs jobs (`POST /jobs`, the
    built-in agents: `mcpsim.runner._jobs`). It listens on `host` (None: the node's
    address, as Ray knows it; a wildcard bind is reached at that address too) and serves the Host
    headers of the router's URL (the router forwards its clients'), of its own address and port
    (for a direct look, `RayEndpoint.hosts`), and the settings' `allowed_hosts` (else loopback)."""

    def __init__(self, settings: dict[str, Any], host: str | None) -> None:
        node = _ray().util.get_node_ip_address()
        bind = host or node
        address = node if bind in ("0.0.0.0", "::", "") else bind
        with socket.socket(socket.AF_INET6 if ":" in bind else socket.AF_INET) as s:
            s.bind((bind, 0))
            port = s.getsockname()[1]
        netloc = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
        allowed = [*(settings.get("allowed_hosts") or _LOOPBACK_HOSTS), netloc]
        app = serve.create_app(serve.ServeConfig(**{**settings, "host": bind, "allowed_hosts": allowed}))
        app.state.control.jobs = ServerJobs()  # POST /jobs with the built-in agents
        self._stack = ExitStack()
        self._stack.enter_context(serve.serve_in_thread(app, host=bind, port=port))
        self._url = f"http://{netloc}"

    def url(self) -> str:
        return self._url

    def node(self) -> str:
        return str(_ray().get_runtime_context().get_node_id())


def _router(endpoint: RayEndpoint) -> Any:
    """The one endpoint in front of the hosts (`mcpsim.runner._ray_router.router_app`)."""
    from mcpsim.runner._ray_router import router_app  # only when a router starts: off `mcpsim --help`

    return router_app(endpoint)


@contextmanager
def serve_on_ray(
    world: str = "retail",
    *,
    hosts: int | None = None,
    token: str | None = None,
    address: str | None = None,
    router_host: str = "127.0.0.1",
    bind: str | None = None,
    **settings: Any,
) -> Iterator[RayEndpoint]:
    """An mcpsim server for trainers on Ray: `hosts` `ServerHost` actors (default: one per CPU of
    the cluster) behind one router on `router_host` in this process, until the block ends. Each
    host listens on `bind` (default: its node's address, as Ray knows it, which the router reaches
    it at; `ServerHost`). Without a `token` one is generated; `settings`: more `ServeConfig` fields
    for every host."""
    ray = _ray()
    connected = connect(address)
    token = token or secrets.token_urlsafe(32)
    with ExitStack() as stack:
        if connected:
            stack.callback(ray.shutdown)
        count = hosts or int(ray.cluster_resources().get("CPU", 0))
        if count < 1:
            raise RunError("the Ray cluster has no CPU to host a server on")
        endpoint = RayEndpoint("", token, [], [], {})
        endpoint.url = stack.enter_context(serve.serve_in_thread(_router(endpoint), host=router_host))
        actor = ray.remote(ServerHost).options(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")
        options = {"world": world, "token": token, "public_url": endpoint.url, "ttl_seconds": None, **settings}
        actors = [actor.remote(options, bind) for _ in range(count)]
        stack.callback(_kill_all, actors)
        endpoint.hosts = ray.get([a.url.remote() for a in actors])
        endpoint.nodes = ray.get([a.node.remote() for a in actors])
        yield endpoint


# -- a cluster on this machine, for trying things out, tests and benchmarks ------------------------

START_TIMEOUT = 180.0  # seconds for a node to join, on a loaded machine


@dataclass
class LocalCluster:
    """A Ray cluster of `ray start --block` processes on this machine: a head and worker nodes,
    each with `cpus` CPUs and a custom resource named after it (`head`, `w1`, `w2`, ...), each
    in a process group of its own, so that `kill` ends a node as a machine's crash would. Its
    nodes have the address `ip` (loopback, or one of this machine's own, as separate machines would)."""

    folder: Path  # the nodes' logs and Ray's session files
    ip: str = "127.0.0.1"
    address: str = ""
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    node_ids: dict[str, str] = field(default_factory=dict)  # node name -> Ray node id

    @classmethod
    @contextmanager
    def start(
        cls, workers: int = 2, *, cpus: int = 1, head_cpus: int = 1, ip: str = "127.0.0.1"
    ) -> Iterator[LocalCluster]:
        """The cluster, with this process connected to it, until the block ends; its nodes'
        address is `ip` (an IPv4 address of this machine)."""
        ray = _ray()
        # a short folder: Ray's Unix sockets live under it, and a socket's path has at most 107 bytes
        cluster = cls(Path(tempfile.mkdtemp(prefix="mcpsim-ray-")), ip)
        with socket.socket() as s:
            s.bind((ip, 0))
            port = s.getsockname()[1]
        cluster.address = f"{ip}:{port}"
        try:
            head = ["--head", "--port", str(port), "--include-dashboard=false", "--temp-dir", str(cluster.folder / "t")]
            cluster._node("head", head_cpus, head)
            deadline = time.monotonic() + START_TIMEOUT
            while True:  # until the head answers on its port
                try:
                    socket.create_connection((ip, port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or cluster.processes["head"].poll() is not None:
                        raise RunError(f"the Ray head did not start; its log: {cluster.folder / 'head.log'}") from None
                    time.sleep(0.2)
            ray.init(address=cluster.address, include_dashboard=False, configure_logging=False, log_to_driver=False)
            for number in range(1, workers + 1):  # one at a time: a loaded machine times them out together
                name = f"w{number}"
                cluster._node(name, cpus, ["--address", cluster.address])
                deadline = time.monotonic() + START_TIMEOUT
                while sum(1 for n in ray.nodes() if n["Alive"]) < number + 1:
                    if time.monotonic() > deadline or cluster.processes[name].poll() is not None:
                        raise RunError(f"the Ray node {name} did not join; its log: {cluster.folder / name}.log")
                    time.sleep(0.1)
            for node in ray.nodes():
                if node["Alive"]:
                    name = next(r for r in node["Resources"] if r in cluster.processes)
                    cluster.node_ids[name] = node["NodeID"]
            yield cluster
        finally:
            try:
                if ray.is_initialized():
                    ray.shutdown()
            finally:  # the nodes go whatever happened above
                cluster._stop()
                shutil.rmtree(cluster.folder, ignore_errors=True)

    def _node(self, name: str, cpus: int, args: list[str]) -> None:
        command = [str(Path(sys.executable).parent / "ray"), "start", "--block", "--node-ip-address", self.ip]
        command += ["--num-cpus", str(cpus), "--object-store-memory", str(100 * 1024 * 1024)]
        command += ["--resources", json.dumps({name: 1}), *args]
        environment = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        with open(self.folder / f"{name}.log", "wb") as log:  # the child keeps its own descriptor
            self.processes[name] = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=environment
            )

    def kill(self, name: str, pids: Sequence[int] = ()) -> None:
        """End the node `name` at once (SIGKILL to its process group) and the worker processes
        `pids` it runs (Ray starts them in groups of their own)."""
        os.killpg(self.processes[name].pid, signal.SIGKILL)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.processes[name].wait(timeout=60)

    def _stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(process.pid, signal.SIGKILL)  # what it left behind (the head's gcs, a raylet)
            except ProcessLookupError:
                pass
            process.wait(timeout=60)
