"""Which worlds `mcpsim serve --http` serves, and what it says while it starts (issue 35): a folder
of specs needs no WORLD, `--only` limits the worlds, the worlds served are named on stderr, and a
line says when it starts building and when it is ready, with stderr a pipe and no --progress."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from mcpsim.catalogue._loading import worlds_registered_here_removed
from mcpsim.cli import main
from mcpsim.serve._settings import ServeConfig
from mcpsim.testing._driver import clean_env
from tests.support.commands import serve_http_config

SPECS = Path(__file__).resolve().parents[2] / "examples" / "specs"
WAIT = 600.0  # seconds for a line: generous, the machine is shared


@pytest.fixture(autouse=True)
def _specs_loaded_here_stay_here() -> Iterator[None]:
    """A test's --worlds-dir worlds are gone for the next test (one without WORLD would serve them)."""
    with worlds_registered_here_removed():
        yield


@contextmanager
def _serving(*args: str, cache: Path) -> Iterator[tuple[str, list[str]]]:
    """`mcpsim serve ARGS --http --port 0 --no-auth` as a real process, its stderr a pipe and no
    --progress; yields its base URL and its stderr lines up to `ready`."""
    command = [sys.executable, "-m", "mcpsim", "serve", *args, "--http", "--port", "0", "--no-auth"]
    command += ["--scale", "small", "--cache-dir", str(cache), "--log-level", "WARNING"]
    proc = subprocess.Popen(command, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        while not (seen and seen[-1].startswith("mcpsim: ready")):
            line = lines.get(timeout=WAIT)
            assert line is not None, "the server exited:\n" + "\n".join(seen)
            seen.append(line)
        [url] = {m.group(1) for line in seen if (m := re.search(r"serving \S+ on (http://\S+)/mcp", line))}
        yield url, seen
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        reader.join(timeout=60)
        assert proc.stderr is not None
        proc.stderr.close()


@pytest.mark.system
def test_a_folder_of_specs_is_served_without_a_world_argument(tmp_path: Path) -> None:
    folder = tmp_path / "worlds"
    folder.mkdir()
    (folder / "bikes.yaml").write_text((SPECS / "bikes.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with _serving("--worlds-dir", str(folder), cache=tmp_path / "cache") as (url, stderr):
        building = next(i for i, line in enumerate(stderr) if line.startswith("mcpsim: building bikes"))
        assert building < len(stderr) - 1  # said before it was ready
        assert any(line.endswith("worlds served: bikes") for line in stderr), stderr
        assert stderr[-1] == f"mcpsim: ready: {url}/health answers"
        assert httpx.get(f"{url}/health", timeout=30).status_code == 200
        assert [w["name"] for w in httpx.get(f"{url}/worlds", timeout=30).json()] == ["bikes"]


@pytest.mark.system
def test_only_limits_the_worlds_served_and_they_are_named(tmp_path: Path) -> None:
    with _serving("retail", "--only", "airline", cache=tmp_path / "cache") as (url, stderr):
        assert any(line.endswith("worlds served: airline, retail") for line in stderr), stderr
        assert sorted(w["name"] for w in httpx.get(f"{url}/worlds", timeout=30).json()) == ["airline", "retail"]
        refused = httpx.post(f"{url}/episodes", json={"world": "bank", "scale": "small"}, timeout=60)
        assert refused.status_code == 422 and "bank" in refused.text
        made = httpx.post(f"{url}/episodes", json={"world": "airline", "scale": "small"}, timeout=300)
        assert made.status_code == 201, made.text


def _config(monkeypatch: pytest.MonkeyPatch, *args: str) -> ServeConfig:
    """The ServeConfig `mcpsim serve ARGS --http` builds its app from (the app is not built)."""
    command = ["serve", *args, "--http", "--port", "0", "--no-auth", "--scale", "small"]
    return serve_http_config(monkeypatch, command, {"MCPSIM_TOKEN": None, "MCPSIM_ONLY": None})


def test_only_and_world_reach_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch, "retail", "--only", "bank", "--only", "airline")
    assert (config.world, config.only) == ("retail", ["retail", "bank", "airline"])
    config = _config(monkeypatch, "--only", "bank")
    assert (config.world, config.only) == ("bank", ["bank"])
    assert _config(monkeypatch, "retail").only == []  # every installed world


def test_a_folder_without_world_serves_its_worlds_first_behind_mcp(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch, "--worlds-dir", str(SPECS))
    assert (config.world, config.only) == ("bikes", ["bikes", "clinic", "library"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http"], "Missing argument 'WORLD': name the world to serve, or serve a folder of world specs"),
        (["retail", "--http", "--only", "retial"], "unknown world 'retial'"),
        (["retail", "--only", "airline"], "--only chooses the worlds an HTTP server serves: add --http"),
        (["--worlds-dir", str(SPECS)], "stdio serves one world: name it (one of bikes, clinic, library)"),
    ],
)
def test_what_cannot_be_served_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    def never(*args: object) -> None:
        raise AssertionError("a usage error must come before serving")

    monkeypatch.setattr("mcpsim.cli._serving_http.serve_http", never)
    monkeypatch.setattr("mcpsim.cli._serving._serve_stdio", never)
    result = CliRunner().invoke(main, ["serve", *args], env={"MCPSIM_ONLY": None})
    assert result.exit_code == 2, result.output
    assert message in result.output
