"""`mcpsim run W --server URL` checks the server's copy of W against the client's before any
episode starts (issue 35): a world the server does not serve, one the client has no copy of, and
one whose versions differ are usage errors that say so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.catalogue import register_spec
from mcpsim.catalogue._loading import worlds_registered_here_removed
from mcpsim.cli import main

SPEC = Path(__file__).resolve().parents[2] / "examples" / "specs" / "bikes.yaml"
TOKEN = "t" * 24


@pytest.fixture
def bikes_server(serve_http, tmp_path: Path) -> Iterator[str]:
    """A server of the bikes spec world, which this process then forgets (the client has no copy)."""
    with worlds_registered_here_removed():
        world = register_spec(SPEC)
    url = serve_http([world], token=TOKEN).url
    with worlds_registered_here_removed():  # what the test's --world-spec registers
        yield url


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", *args, "--agent", "noop"], env={"MCPSIM_TOKEN": None})
    return result.exit_code, result.output


def test_a_world_the_server_does_not_serve_is_named_with_those_it_does(bikes_server: str, tmp_path: Path) -> None:
    code, output = _run("retail", "--server", bikes_server, "--token", TOKEN, "--out", str(tmp_path))
    assert code == 2 and "does not serve 'retail' (it serves: bikes)" in output, output


def test_a_world_only_the_server_has_says_to_load_its_spec(bikes_server: str, tmp_path: Path) -> None:
    code, output = _run("bikes", "--server", bikes_server, "--token", TOKEN, "--out", str(tmp_path))
    assert code == 2, output
    assert "serves 'bikes'" in output and "this client has no copy of it" in output and "--world-spec" in output


def test_a_version_mismatch_is_refused_before_any_episode(bikes_server: str, tmp_path: Path) -> None:
    changed = tmp_path / "bikes.yaml"
    text = SPEC.read_text(encoding="utf-8")
    rule = "look the rider up by their rider id."
    assert rule in text
    changed.write_text(text.replace(rule, "look the rider up by their rider id, always."), encoding="utf-8")
    out = tmp_path / "runs"
    code, output = _run(
        "bikes", "--world-spec", str(changed), "--server", bikes_server, "--token", TOKEN, "--out", str(out)
    )
    assert code == 2, output
    assert "world 'bikes' differs: the server at" in output and "this client has version" in output
    assert not out.exists()


def test_a_refused_token_is_said_before_any_episode(bikes_server: str, tmp_path: Path) -> None:
    code, output = _run("bikes", "--server", bikes_server, "--token", "wrong-token-wrong", "--out", str(tmp_path))
    assert code == 2 and "refused the control-plane token" in output, output
