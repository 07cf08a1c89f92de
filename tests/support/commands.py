"""Command lines of the `mcpsim` CLI that several tests run, in-process (click's CliRunner) or as a
child process (`mcpsim_argv`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.serve._settings import ServeConfig
from mcpsim.tasks import Task
from mcpsim.tasks._scenario import oracle_answer


def mcpsim_argv(*args: str) -> list[str]:
    """`python -m mcpsim ARGS` with this interpreter."""
    return [sys.executable, "-m", "mcpsim", *args]


def verify_args(world: str, task: Task, snapshot: Path, conversation: Path) -> list[str]:
    """`mcpsim verify` of the oracle's answer to `task`, the verdict as JSON."""
    return [
        *("verify", world, "--task", task.id, "--snapshot", str(snapshot)),
        *("--answer", oracle_answer(task), "--conversation", str(conversation), "--json"),
    ]


def oracle_run_args(world: str, out: Path, concurrency: int) -> list[str]:
    """`mcpsim run` of the oracle agent over all of the world's tasks."""
    return ["run", world, "--agent", "oracle", "--tasks", "all", "--concurrency", str(concurrency), "--out", str(out)]


def serve_http_config(monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str | None]) -> ServeConfig:
    """The ServeConfig `mcpsim ARGS` (a `serve ... --http`) builds its app from; the app is not built."""
    seen: list[ServeConfig] = []

    class Stop(Exception):
        pass

    def create_app(config: ServeConfig) -> None:
        seen.append(config)
        raise Stop

    monkeypatch.setattr("mcpsim.cli._serving_http.create_app", create_app)  # where `serve --http` takes it from
    result = CliRunner().invoke(main, args, env=env)
    assert isinstance(result.exception, Stop), result.output
    [config] = seen
    return config
