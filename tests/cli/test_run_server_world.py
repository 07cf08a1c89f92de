"""`mcpsim run W --server URL` checks the server's copy of W against the client's before any
episode starts (issue 35): a world the server does not serve and one whose versions differ are
usage errors that say so; a world only the server has runs on the server's task listing, with
the server's scripted user and grading."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcpsim.catalogue import register_spec
from mcpsim.catalogue._loading import worlds_registered_here_removed
from mcpsim.cli import main
from mcpsim.cli._remote import _public_fields
from mcpsim.tasks import TaskSet, load_tasks
from mcpsim.trajectories import Journal
from mcpsim.world import UnknownWorld, load_world

SPEC = Path(__file__).resolve().parents[2] / "examples" / "specs" / "bikes.yaml"
TOKEN = "t" * 24
SERVER_TURN = "While you are at it, what does a rental cost?"


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


@pytest.fixture
def bikes_with_tasks(serve_http) -> Iterator[tuple[str, TaskSet, str]]:
    """A server of the bikes spec world and its tasks, one of which gets a scripted second user
    turn; this process then forgets the world (the client has no copy, not even of the tasks).
    The server's URL, its tasks and the world's version."""
    with worlds_registered_here_removed():
        world = register_spec(SPEC)
        tasks = load_tasks(world.name)
    first = tasks.tasks[0]
    talker = first.model_copy(update={"user": first.user.model_copy(update={"turns": [SERVER_TURN]})})
    files = [f.model_copy(update={"tasks": [talker if t.id == first.id else t for t in f.tasks]}) for f in tasks.files]
    served = TaskSet(world=tasks.world, files=files)
    url = serve_http([world], token=TOKEN, tasks={"bikes": served}).url
    with worlds_registered_here_removed():
        yield url, served, world.version


def test_a_world_only_the_server_has_runs_on_the_servers_tasks_user_and_grading(
    bikes_with_tasks: tuple[str, TaskSet, str], tmp_path: Path
) -> None:
    url, served, version = bikes_with_tasks
    with pytest.raises(UnknownWorld):
        load_world("bikes")  # the client side cannot load it
    code, output = _run("bikes", "--server", url, "--token", TOKEN, "--out", str(tmp_path))
    assert code == 0, output
    ran = {t.task_id: t for t in Journal(tmp_path).read()}
    assert set(ran) == {t.id for t in served.tasks}
    for task in served.tasks:
        episode = ran[task.id]
        assert episode.status == "completed" and episode.termination == "answered", episode.error
        assert episode.verdict is not None and episode.verdict["task_id"] == task.id  # the server's grading
        assert episode.world_version == version and episode.reward == 0.0  # the do-nothing agent fails
        users = [m.content for m in episode.messages if m.role == "user"]
        # the opening from the listing; the scripted turn, which only the server knows, from the server
        assert users == [task.instruction, *([SERVER_TURN] if task.user.turns else [])]
    assert sum(SERVER_TURN in (m.content or "") for t in ran.values() for m in t.messages) == 1


@pytest.mark.parametrize(
    ("extra", "hint", "fragment"),
    [
        (["--agent", "oracle"], "--agent", "oracle reads each task's gold solution, which only the server has"),
        (["--agent", "noop", "--user", "openai:m"], "--user", "a model user needs what each task's user knows"),
        (["--agent", "noop", "--tier", "easy"], "--tier", "replaying each task's gold solution"),
        (["--agent", "noop", "--executor", "ray"], "--executor", "runs on the local executor"),
    ],
)
def test_what_needs_the_hidden_parts_is_refused_for_a_world_only_the_server_has(
    bikes_with_tasks: tuple[str, TaskSet, str], tmp_path: Path, extra: list[str], hint: str, fragment: str
) -> None:
    url = bikes_with_tasks[0]
    out = tmp_path / "runs"
    args = ["run", "bikes", "--server", url, "--token", TOKEN, "--out", str(out), *extra]
    result = CliRunner().invoke(main, args, env={"MCPSIM_TOKEN": None})
    assert result.exit_code == 2 and fragment in result.output and hint in result.output, result.output
    assert not out.exists()


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


def test_a_world_only_the_server_has_needs_its_task_listing(bikes_server: str, tmp_path: Path) -> None:
    code, output = _run("bikes", "--server", bikes_server, "--token", TOKEN, "--out", str(tmp_path / "runs"))
    assert code == 2 and "lists no tasks of 'bikes'" in output and "HTTP 404" in output, output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "../../etc/x", "split": "dev", "instruction": "Rent me a bike please."},  # ids name files under --out
        {"id": "ok", "split": "nightly", "instruction": "Rent me a bike please."},
        {"id": "ok", "split": "dev", "instruction": None},
        {"id": "ok", "split": "dev", "instruction": "Rent me a bike please.", "tags": "a"},
        {"id": "ok\n", "split": "dev", "instruction": "Rent me a bike please."},  # the whole id, not a prefix
        "not a task",
    ],
)
def test_a_listed_task_that_is_not_one_is_refused(entry: object) -> None:
    assert _public_fields(entry) is None
    good = {"id": "ok", "split": "dev", "instruction": "Rent me a bike please.", "persona": "P", "tags": ["t"]}
    assert _public_fields(good) == {**good, "difficulty": "medium"}


def test_an_endless_task_listing_is_refused_after_a_bounded_read() -> None:
    """A server that answers GET /worlds/W/tasks with a body that never ends (a real HTTP server
    on loopback): the client stops reading past `MAX_LISTING_BYTES` and says why, holding no
    more than that."""
    import http.server
    import threading

    from mcpsim.cli import _remote

    sent = []

    class Endless(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            chunk = b'[{"id": "a", "split": "dev", "instruction": "x"},' + b" " * 65_000
            try:
                self.wfile.write(b"[")
                for _ in range(10_000):  # 650 MB if nobody stops reading
                    self.wfile.write(chunk)
                    sent.append(len(chunk))
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(click.UsageError, match=f"longer than {_remote.MAX_LISTING_BYTES} bytes"):
            _remote.served_tasks("bikes", url, {})
    finally:
        server.shutdown()
        server.server_close()
    assert sum(sent) < 2 * _remote.MAX_LISTING_BYTES + 10_000_000  # it stopped, far short of the whole body
