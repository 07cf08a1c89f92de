"""A verdict never depends on how busy the machine is.

On main before this change, an oracle run at concurrency 64 on this 2-core machine scored 0 on 5 of
83 retail tasks: "the verifier timed out after 30 s" (a wall-clock deadline). Grading is now
bounded by work (SQLite steps, CPU time of the grading thread), and a grading that stalls is an
infrastructure error that the runner retries, recorded without a reward if it never finishes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.grading import GradingUnavailable
from mcpsim.runner import _loop as loop
from mcpsim.runner._agents import NoopAgent, OracleAgent
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._run import RunConfig, run_episodes
from mcpsim.runner._users import ScriptedUser
from mcpsim.serve._host import EpisodeManager
from mcpsim.tasks import load_tasks
from mcpsim.trajectories._records import Trajectory
from tests.support.commands import oracle_run_args
from tests.support.verifier_fixtures import ledger_tasks

pytestmark = pytest.mark.anyio

HOG = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end: pass\n"


def lines(out: Path) -> list[Trajectory]:
    return [Trajectory.model_validate_json(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]


def test_an_oracle_run_at_concurrency_64_on_a_loaded_machine_scores_every_task_1(tmp_path):
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]  # both cores busy
    try:
        result = CliRunner().invoke(
            main,
            oracle_run_args("retail", tmp_path / "run", 64),
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(timeout=60)
    assert result.exit_code == 0, result.output
    runs = lines(tmp_path / "run")
    assert len(runs) == len(load_tasks("retail").tasks)
    assert [t.task_id for t in runs if t.reward != 1.0] == []
    assert all(t.verdict and not t.verdict["failure"] for t in runs)


def _ledger_backend(ledger, templates) -> tuple[InProcessBackend, EpisodeManager]:
    tasks = ledger_tasks(ledger, templates)
    manager = EpisodeManager(templates, ttl_seconds=None, worlds=lambda name: ledger, tasks=lambda name: tasks)
    return InProcessBackend(manager), manager


async def test_a_grading_that_stalls_once_is_retried_and_the_episode_keeps_its_verdict(
    tmp_path, ledger, templates, monkeypatch
):
    backend, manager = _ledger_backend(ledger, templates)
    verifier = manager.verifier("ledger")
    real_grade, calls = verifier.grade, []

    def flaky_grade(*args, **kwargs):  # the first grading stalls (as under a hung check), then it works
        calls.append(1)
        if len(calls) == 1:
            raise GradingUnavailable("grading made no progress for 600 s; retry it")
        return real_grade(*args, **kwargs)

    monkeypatch.setattr(verifier, "grade", flaky_grade)
    monkeypatch.setattr(loop, "GRADING_BACKOFF_S", 0.01)
    task = verifier.tasks.get("pay-and-open")
    await run_episodes(RunConfig(world="ledger", tasks=[task], out=tmp_path), backend, OracleAgent, ScriptedUser)
    (t,) = lines(tmp_path)
    assert len(calls) == 2 and t.termination == "answered" and t.reward == 1.0


async def test_a_grading_that_never_finishes_is_a_grader_error_without_a_reward(
    tmp_path, ledger, templates, monkeypatch
):
    backend, manager = _ledger_backend(ledger, templates)
    manager.verifier("ledger").stall_timeout = 0.2  # the task's custom check sleeps 2 s: a real stall
    monkeypatch.setattr(loop, "GRADING_BACKOFF_S", 0.01)
    task = manager.verifier("ledger").tasks.get("slow-check")
    await run_episodes(RunConfig(world="ledger", tasks=[task], out=tmp_path), backend, NoopAgent, ScriptedUser)
    (t,) = lines(tmp_path)
    assert t.termination == "grader_error" and t.status == "error"
    assert t.reward is None and t.partial_reward is None  # no verdict, not a reward of 0
    assert "no progress" in t.error
    summary = json.loads((tmp_path / "summary.json").read_text()) if (tmp_path / "summary.json").exists() else None
    assert summary is None or summary["errors"] == 1
