"""The runner: agents over real MCP, trajectories, resume and partial rollouts."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.runner._agents import OracleAgent, Turn
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._run import RUN_GC_THRESHOLD0, RunConfig, run_episodes
from mcpsim.runner._summary import summarize
from mcpsim.runner._users import ScriptedUser
from mcpsim.serve._host import EpisodeManager
from mcpsim.tasks import load_tasks
from mcpsim.trajectories._records import Trajectory
from mcpsim.world._registry import load_world
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv, oracle_run_args


@pytest.fixture(scope="module")
def task_set():
    return load_tasks("retail")


def lines(out: Path) -> list[Trajectory]:
    return [Trajectory.model_validate_json(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", "retail", *args])
    return result.exit_code, result.output


def test_the_oracle_scores_every_task_1_and_noop_scores_every_task_0(tmp_path, task_set):
    code, output = run_cli("--agent", "oracle", "--tasks", "all", "--out", str(tmp_path / "oracle"))
    assert code == 0, output
    oracle = lines(tmp_path / "oracle")
    assert len(oracle) == len(task_set.tasks) and all(t.reward == 1.0 for t in oracle)
    code, output = run_cli("--agent", "noop", "--tasks", "all", "--out", str(tmp_path / "noop"))
    assert code == 0, output
    noop = lines(tmp_path / "noop")
    assert len(noop) == len(task_set.tasks) and all(t.reward == 0.0 for t in noop)
    summary = json.loads((tmp_path / "oracle" / "summary.json").read_text())
    assert summary["pass_at_1"] == 1.0 and summary["pass_hat_k"] == {"1": 1.0}


def test_a_trajectory_holds_messages_tools_calls_with_row_changes_and_the_verdict(tmp_path, task_set):
    world = load_world("retail")
    task = next(t for t in task_set.tasks if any(world.tools[a.tool].writes for a in t.gold))
    code, output = run_cli("--agent", "oracle", "--tasks", task.id, "--out", str(tmp_path))
    assert code == 0, output
    (t,) = lines(tmp_path)
    assert t.world == "retail" and t.world_version == world.version and t.task_id == task.id and t.agent == "oracle"
    assert [m.role for m in t.messages[:2]] == ["system", "user"] and t.messages[1].content == task.instruction
    assert t.messages[0].content == world.policy
    assert [d.function["name"] for d in t.tools] == sorted(world.tools)
    calls = [m.tool_calls[0] for m in t.messages if m.tool_calls]
    assert [c.function.name for c in calls] == [a.tool for a in task.gold]
    assert all(json.loads(c.function.arguments) == a.args for c, a in zip(calls, task.gold, strict=True))
    tool_msgs = [m for m in t.messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_msgs] == [c.id for c in calls]
    writes = [c for c in t.calls if world.tools[c.tool].writes]
    assert writes and all(c.changes and c.call_seq for c in writes)
    assert all(not c.changes for c in t.calls if not world.tools[c.tool].writes)
    assert all(c.duration_ms is not None for c in t.calls)
    assert t.verdict["passed"] and t.state_hash == t.verdict["state_hash"] and t.termination == "answered"


@pytest.mark.parametrize("transport", ["http", pytest.param("stdio", marks=pytest.mark.system)])
def test_the_same_run_over_http_and_stdio_gives_the_same_rewards_and_state_hashes(tmp_path, task_set, transport):
    world = load_world("retail")
    sample = ",".join(t.id for t in [t for t in task_set.tasks if any(world.tools[a.tool].writes for a in t.gold)][:3])
    for name, extra in (("inprocess", []), (transport, ["--transport", transport])):
        code, output = run_cli(
            "--agent", "oracle", "--tasks", sample, "--out", str(tmp_path / name), "--concurrency", "3", *extra
        )
        assert code == 0, output
    got = {t.task_id: (t.reward, t.state_hash) for t in lines(tmp_path / transport)}
    want = {t.task_id: (t.reward, t.state_hash) for t in lines(tmp_path / "inprocess")}
    assert got == want and len(got) == 3 and all(r == 1.0 and h for r, h in got.values())


def test_a_run_killed_midway_resumes_without_redoing_finished_episodes(tmp_path, task_set):
    out = tmp_path / "run"
    command = mcpsim_argv(*oracle_run_args("retail", out, 1))
    proc = subprocess.Popen(command, env=CLEAN_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = out / "trajectories.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not journal.exists() or journal.read_text().count("\n") < 3):
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)  # polling the file a subprocess writes; bounded above
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    with journal.open("a") as f:
        f.write('{"schema_version": 1, "world": "ret')  # as if the kill cut a line short
    done_before = {t.task_id for t in lines_until_valid(journal)}
    assert 3 <= len(done_before) < len(task_set.tasks)
    code, output = run_cli("--agent", "oracle", "--tasks", "all", "--concurrency", "4", "--out", str(out), "--resume")
    assert code == 0, output
    final = lines(out)  # every line parses: the cut line was dropped
    keys = [t.key for t in final]
    assert len(keys) == len(set(keys)) == len(task_set.tasks)
    assert f"{len(done_before)} already done" in output
    assert all(t.reward == 1.0 for t in final)
    code, output = run_cli("--agent", "oracle", "--tasks", "all", "--out", str(out))
    assert code == 1 and "--resume" in output


def lines_until_valid(path: Path) -> list[Trajectory]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(Trajectory.model_validate_json(line))
        except ValueError:
            break
    return out


class GatedOracle(OracleAgent):
    """The oracle, but episodes with long gold solutions wait after their first call until two
    episodes have finished, so --keep-first cuts them mid-way, deterministically."""

    def __init__(self, release: anyio.Event) -> None:
        super().__init__()
        self.release = release

    async def respond(self, turn: Turn) -> object:
        if turn.task is not None and len(turn.task.gold) >= 3 and turn.step == 1:
            await self.release.wait()
        return await super().respond(turn)


@pytest.mark.anyio
async def test_keep_first_stops_early_and_a_resumed_episode_ends_in_the_straight_through_state(tmp_path, task_set):
    world = load_world("retail")
    short = [t for t in task_set.tasks if len(t.gold) <= 2][:2]
    long = [t for t in task_set.tasks if len(t.gold) >= 3 and any(world.tools[a.tool].writes for a in t.gold)][:3]
    assert len(short) == 2 and len(long) == 3
    tasks = short + long
    backend = InProcessBackend(EpisodeManager(__import__("mcpsim").TemplateCache(), ttl_seconds=None))
    straight = await run_episodes(
        RunConfig(world="retail", tasks=tasks, out=tmp_path / "straight", concurrency=5),
        backend,
        OracleAgent,
        ScriptedUser,
    )
    assert straight.ran == 5
    release = anyio.Event()
    finished: list[str] = []

    frozen: list[int] = []
    thresholds: list[int] = []
    before = gc.get_threshold()

    def progress(t: Trajectory) -> None:
        finished.append(t.task_id)
        frozen.append(gc.get_freeze_count())
        thresholds.append(gc.get_threshold()[0])
        if len(finished) >= 2:
            release.set()

    with anyio.fail_after(60):
        first = await run_episodes(
            RunConfig(world="retail", tasks=tasks, out=tmp_path / "partial", concurrency=5, keep_first=2),
            backend,
            lambda: GatedOracle(release),
            ScriptedUser,
            on_progress=progress,
        )
    assert (first.ran, first.cancelled) == (2, 3)
    cancelled = [t for t in lines(tmp_path / "partial") if t.status == "cancelled"]
    assert {t.task_id for t in cancelled} == {t.id for t in long}
    gold_length = {t.id: len(t.gold) for t in long}
    # Suspended part-way: the step in flight when the stop came finished, the rest is left to do.
    assert all(
        t.snapshot and Path(t.snapshot).exists() and 1 <= len(t.calls) < gold_length[t.task_id] for t in cancelled
    )
    assert first.summary.cancelled == 3 and first.summary.episodes == 2
    # the summary kept in memory is the one the journal gives when read back
    assert first.summary == summarize(lines(tmp_path / "partial"))
    # the heap the run started from was left out of garbage collection while it ran, and only then
    assert all(n > 0 for n in frozen) and gc.get_freeze_count() == 0
    # and young collections were rarer meanwhile; the process's thresholds are back
    assert thresholds and all(n == RUN_GC_THRESHOLD0 for n in thresholds) and gc.get_threshold() == before
    with anyio.fail_after(60):
        resumed = await run_episodes(
            RunConfig(world="retail", tasks=tasks, out=tmp_path / "partial", concurrency=5, resume=True),
            backend,
            OracleAgent,
            ScriptedUser,
        )
    assert (resumed.ran, resumed.skipped) == (3, 2)
    want = {t.task_id: t.state_hash for t in lines(tmp_path / "straight")}
    done = {t.task_id: t for t in lines(tmp_path / "partial") if t.status == "completed"}
    assert {k: t.state_hash for k, t in done.items()} == want
    assert all(t.reward == 1.0 for t in done.values())
    for task in long:  # the resumed rollout carries its whole conversation, first call included
        assert [c.tool for c in done[task.id].calls] == [a.tool for a in task.gold]
    assert resumed.summary.episodes == 5 and resumed.summary.cancelled == 0
    assert resumed.summary == summarize(lines(tmp_path / "partial"))  # earlier runs' lines included


@pytest.mark.anyio
async def test_a_run_keeps_the_freeze_of_a_process_that_froze_its_own_heap(tmp_path, task_set):
    """A trainer may `gc.freeze()` before it forks its workers: a run inside it neither freezes
    again nor unfreezes what the trainer froze."""
    backend = InProcessBackend(EpisodeManager(__import__("mcpsim").TemplateCache(), ttl_seconds=None))
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        done = await run_episodes(
            RunConfig(world="retail", tasks=task_set.tasks[:1], out=tmp_path / "frozen"),
            backend,
            OracleAgent,
            ScriptedUser,
        )
        assert done.ran == 1 and gc.get_freeze_count() > frozen // 2 > 0  # (refcounting frees a few)
    finally:
        gc.unfreeze()


@pytest.mark.anyio
async def test_a_run_keeps_a_higher_collector_threshold_and_one_set_while_it_ran(tmp_path, task_set):
    backend = InProcessBackend(EpisodeManager(__import__("mcpsim").TemplateCache(), ttl_seconds=None))
    config = RunConfig(world="retail", tasks=task_set.tasks[:1], out=tmp_path / "gc")
    before = gc.get_threshold()
    try:
        gc.set_threshold(50_000, *before[1:])  # a host's own, higher: left alone
        assert (await run_episodes(config, backend, OracleAgent, ScriptedUser)).ran == 1
        assert gc.get_threshold() == (50_000, *before[1:])
        gc.set_threshold(*before)

        def change(_t: Trajectory) -> None:
            gc.set_threshold(1_000, *before[1:])  # the host changes it while the run goes on: kept

        config = RunConfig(world="retail", tasks=task_set.tasks[:1], out=tmp_path / "gc2")
        assert (await run_episodes(config, backend, OracleAgent, ScriptedUser, on_progress=change)).ran == 1
        assert gc.get_threshold() == (1_000, *before[1:])
        gc.set_threshold(0, *before[1:])  # automatic collection off: a run must not turn it back on
        seen: list[int] = []
        config = RunConfig(world="retail", tasks=task_set.tasks[:1], out=tmp_path / "gc3")
        watch = lambda _t: seen.append(gc.get_threshold()[0])  # noqa: E731
        assert (await run_episodes(config, backend, OracleAgent, ScriptedUser, on_progress=watch)).ran == 1
        assert seen == [0] and gc.get_threshold() == (0, *before[1:])
    finally:
        gc.set_threshold(*before)


def test_every_export_format_of_a_real_run_loads_back(tmp_path):
    import pyarrow.parquet as pq

    code, output = run_cli("--agent", "oracle", "--tasks", "train", "--out", str(tmp_path))
    assert code == 0, output
    episodes = len(lines(tmp_path))
    runner = CliRunner()
    for fmt in ("openai", "trl", "verifiers"):
        result = runner.invoke(main, ["export", str(tmp_path), "--format", fmt])
        assert result.exit_code == 0 and f"wrote {episodes} episodes" in result.output, result.output
        rows = [json.loads(line) for line in (tmp_path / f"export.{fmt}.jsonl").read_text().splitlines()]
        assert len(rows) == episodes
    openai_rows = [json.loads(x) for x in (tmp_path / "export.openai.jsonl").read_text().splitlines()]
    calls = [c for r in openai_rows for m in r["messages"] for c in m.get("tool_calls", [])]
    assert calls and all(isinstance(c["function"]["arguments"], str) for c in calls)
    trl_rows = [json.loads(x) for x in (tmp_path / "export.trl.jsonl").read_text().splitlines()]
    assert all(
        isinstance(c["function"]["arguments"], dict)
        for r in trl_rows
        for m in r["messages"]
        for c in m.get("tool_calls") or []
    )
    result = runner.invoke(main, ["export", str(tmp_path), "--format", "parquet", "--min-reward", "1"])
    assert result.exit_code == 0, result.output
    assert pq.read_table(tmp_path / "export.parquet").num_rows == episodes


def test_the_demo_runs_oracle_and_noop_over_http_and_writes_trajectories(tmp_path):
    result = CliRunner().invoke(main, ["demo", "--out", str(tmp_path), "--tasks", "3", "--no-cache"])
    assert result.exit_code == 0, result.output
    oracle, noop = lines(tmp_path / "oracle"), lines(tmp_path / "noop")
    assert len(oracle) == len(noop) == 3
    assert all(t.reward == 1.0 for t in oracle) and all(t.reward == 0.0 for t in noop)
    assert "pass@1 1.000" in result.output and "pass@1 0.000" in result.output
    assert all(t.episode_id and len(t.episode_id) >= 22 for t in oracle)  # HTTP episodes, not in-process


def test_the_demo_prints_json_for_pipes_and_progress_on_stderr_when_asked(tmp_path):
    result = CliRunner().invoke(main, ["demo", "--out", str(tmp_path), "--tasks", "2", "--json", "--progress"])
    assert result.exit_code == 0, result.output
    summaries = json.loads(result.stdout)  # stdout is the JSON alone: no tables, no progress
    assert set(summaries) == {"oracle", "noop"}
    assert summaries["oracle"]["pass_at_1"] == 1.0 and summaries["noop"]["pass_at_1"] == 0.0
    assert summaries["oracle"] == json.loads((tmp_path / "oracle" / "summary.json").read_text())
    assert "mcpsim: serving retail on 127.0.0.1 for the oracle agent" in result.stderr
    assert "mcpsim: noop: 2 episodes graded, pass@1 0.000" in result.stderr


class SleepyAgent(OracleAgent):
    """Makes one call, then thinks for far longer than the episode may last."""

    async def respond(self, turn: Turn) -> object:
        if turn.step == 1:
            await anyio.sleep(30)
        return await super().respond(turn)


@pytest.mark.anyio
async def test_an_episode_past_its_timeout_ends_as_timeout_and_is_still_graded(tmp_path, task_set):
    from mcpsim.runner._loop import RolloutSettings

    task = next(t for t in task_set.tasks if len(t.gold) >= 2)
    backend = InProcessBackend(EpisodeManager(__import__("mcpsim").TemplateCache(), ttl_seconds=None))
    config = RunConfig(world="retail", tasks=[task], out=tmp_path, settings=RolloutSettings(timeout=0.5))
    with anyio.fail_after(20):
        result = await run_episodes(config, backend, SleepyAgent, ScriptedUser)
    (t,) = lines(tmp_path)
    assert t.termination == "timeout" and t.status == "completed" and len(t.calls) == 1
    assert t.verdict is not None and t.reward == 0.0 and result.summary.tasks[0].terminations == {"timeout": 1}


def test_the_random_agent_makes_schema_shaped_calls_and_repeats_itself_under_the_same_seed(tmp_path):
    for name in ("a", "b"):
        code, output = run_cli("--agent", "random", "--tasks", "dev", "--seed", "7", "--out", str(tmp_path / name))
        assert code == 0, output
    a, b = lines(tmp_path / "a"), lines(tmp_path / "b")
    calls = [c for t in a for c in t.calls]
    assert len(calls) >= 8 * len(a) and any(c.ok for c in calls)
    assert not any("not a valid JSON object" in (c.error or "") for c in calls)  # it always sends objects

    def by_task(run: list[Trajectory]) -> dict:
        return {t.key: [(c.tool, c.arguments) for c in t.calls] for t in run}  # lines come in finishing order

    assert by_task(a) == by_task(b)
    assert all(t.reward == 0.0 for t in a)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--address", "127.0.0.1:6379"], "--address names a Ray cluster: add --executor ray"),
        (["--executor", "ray", "--keep-first", "1"], "leave out --server, --transport and --keep-first"),
        (["--executor", "ray", "--transport", "http"], "leave out --server, --transport and --keep-first"),
        (["--user", "someone"], "use scripted or openai:MODEL"),
    ],
)
def test_run_refuses_options_that_do_not_go_together(tmp_path, args: list[str], message: str) -> None:
    code, output = run_cli("--out", str(tmp_path), *args)
    assert code == 2 and message in " ".join(output.split())


def test_ray_is_imported_only_when_a_ray_run_starts() -> None:
    code = (
        "import sys, mcpsim.cli._running, mcpsim.runner._run, mcpsim.runner._cluster, mcpsim.env._environment; "
        "assert 'ray' not in sys.modules, 'ray was imported'"
    )
    result = subprocess.run([mcpsim_argv()[0], "-c", code], capture_output=True, text=True, timeout=120, env=CLEAN_ENV)
    assert result.returncode == 0, result.stderr


@pytest.mark.anyio
async def test_the_in_process_backend_works_off_the_loop_one_thread_at_a_time(tmp_path, task_set):
    """Creating, grading and recording episodes is pure Python and SQLite: the backend runs it in
    one worker thread at a time (`mcpsim.serve._work`), not in as many as anyio allows, whose contention
    for the GIL cost more CPU than the work at high concurrency. Episodes still overlap."""
    import threading

    from mcpsim.serve import _work as work

    state = {"now": 0, "most": 0, "threads": set()}
    lock = threading.Lock()

    class Watched(EpisodeManager):
        def create(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            with lock:
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
                state["threads"].add(threading.get_ident())
            try:
                time.sleep(0.05)  # long enough for others to start, were they allowed to
                return super().create(*args, **kwargs)
            finally:
                with lock:
                    state["now"] -= 1

    assert work.WORK_THREADS == 1
    backend = InProcessBackend(Watched(__import__("mcpsim").TemplateCache(), ttl_seconds=None))
    with anyio.fail_after(120):
        done = await run_episodes(
            RunConfig(world="retail", tasks=task_set.tasks[:6], out=tmp_path / "work", concurrency=6),
            backend,
            OracleAgent,
            ScriptedUser,
        )
    assert done.ran == 6 and done.summary.pass_at_1 == 1.0
    assert state["most"] == 1  # never two at once (anyio's default limiter would let all six in)
    assert threading.get_ident() not in state["threads"]  # and never on the event loop's thread
