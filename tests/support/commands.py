"""Command lines of the `mcpsim` CLI that several tests run, in-process (click's CliRunner) or as a
child process (`mcpsim_argv`)."""

from __future__ import annotations

import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def serving_worlds(folder: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, str]]:
    """`mcpsim serve-worlds FOLDER OPTIONS` as a child process on a free loopback port with a fresh
    token (its stderr beside FOLDER, in `FOLDER.server.log`): yields its URL and the token, and stops it."""
    from tests.conftest import CLEAN_ENV, free_port, wait_until_healthy

    token, port = secrets.token_hex(16), free_port()
    argv = mcpsim_argv("serve-worlds", str(folder), "--port", str(port), "--token", token, *options)
    log = folder.with_name(f"{folder.name}.server.log")
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, env={**CLEAN_ENV, **(env or {})}, stdout=subprocess.DEVNULL, stderr=err)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, proc, log)
            yield url, token
        finally:
            proc.terminate()
            proc.wait(timeout=60)
