"""stdio start-up: `mcpsim serve WORLD` answers `initialize` from the world's card while a thread
loads the world (mcpsim.serve._startup). Real server processes over real stdio (JSON-RPC lines on
their stdin and stdout), a real template cache on disk."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpsim.serve import _startup as startup
from mcpsim.serve._startup import _stamp, own_sources, read_card, usage_problem, write_card
from mcpsim.testing._driver import clean_env

CUSTOMER = "cus_0558461"  # the first customer of retail, seed 0, small scale
INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


class Stdio:
    """A `mcpsim serve retail` process spoken to line by line, as an MCP client does."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcpsim", "serve", "retail", "--scale", "small", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env() | {"PYTHONUNBUFFERED": "1"},
        )
        self.ids = 0
        self.stdout: list[str] = []

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method} | ({"params": params} if params else {})
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()  # a loaded machine: no bound but the test's own timeout
        self.stdout.append(line)
        answer = json.loads(line)
        assert answer["id"] == self.ids, answer
        return answer

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def session(self) -> dict[str, Any]:
        """initialize, tools/list, a read and a refused call: what a client sees first."""
        init = self.request("initialize", INITIALIZE)
        self.notify("notifications/initialized")
        tools = self.request("tools/list")
        call = self.request("tools/call", {"name": "get_customer_details", "arguments": {"customer_id": CUSTOMER}})
        wrong = self.request("tools/call", {"name": "get_customer_details", "arguments": {"customer_id": 1, "x": 2}})
        policy = self.request("resources/read", {"uri": "mcpsim://retail/policy"})
        return {"initialize": init, "tools": tools, "call": call, "wrong": wrong, "policy": policy}

    def close(self) -> tuple[int, str]:
        """Hang up; the exit code and stderr."""
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        err = self.proc.stderr.read()
        code = self.proc.wait(timeout=300)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, err


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("templates")


@pytest.mark.system
def test_the_handshake_from_the_card_then_the_same_session_as_a_loaded_world(cache: Path) -> None:
    first = Stdio("--cache-dir", str(cache), "--progress")  # no card yet: the world is loaded first
    cold = first.session()
    code, err = first.close()
    assert code == 0, err
    assert "answering the handshake" not in err and "mcpsim: ready: 24 tools" in err
    assert (cache / "cards" / "retail.json").exists()

    second = Stdio("--cache-dir", str(cache), "--progress")
    warm = second.session()
    code, err = second.close()
    assert code == 0, err
    assert "mcpsim: answering the handshake while world retail loads" in err
    assert warm == cold  # the handshake, the tools, a call, a refused call and the policy alike
    assert warm["initialize"]["result"]["serverInfo"]["name"] == "mcpsim-retail"
    assert warm["initialize"]["result"]["instructions"].startswith("# Retail customer service policy")
    assert len(warm["tools"]["result"]["tools"]) == 24
    assert "Kimberly" in warm["call"]["result"]["content"][0]["text"]
    assert (
        warm["wrong"]["result"]["isError"] and "x is not an argument" in warm["wrong"]["result"]["content"][0]["text"]
    )
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in second.stdout)  # nothing else on stdout


@pytest.mark.system
def test_a_world_that_fails_to_load_answers_every_request_with_the_reason(cache: Path, tmp_path: Path) -> None:
    Stdio("--cache-dir", str(cache)).close()  # the card, if the other test did not write it
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    server = Stdio("--cache-dir", str(cache), "--episode", str(junk))
    assert server.request("initialize", INITIALIZE)["result"]["serverInfo"]["name"] == "mcpsim-retail"
    server.notify("notifications/initialized")
    for method, params in [("tools/list", None), ("tools/call", {"name": "get_customer_details", "arguments": {}})]:
        error = server.request(method, params)["error"]
        assert error["message"].startswith("mcpsim could not load world retail: ")
        assert f"{junk} is not an mcpsim episode database" in error["message"]
    code, err = server.close()
    assert code == 1  # as when the world is loaded before the handshake
    assert f"Error: {junk} is not an mcpsim episode database" in err


@pytest.mark.system
def test_an_outdated_card_is_rewritten_once_the_world_loads(cache: Path) -> None:
    Stdio("--cache-dir", str(cache)).close()  # the card, if the other tests did not write it
    path = cache / "cards" / "retail.json"
    saved = json.loads(path.read_text())
    saved["card"]["instructions"] = "outdated"  # as if the policy came from outside the world's package
    path.write_text(json.dumps(saved))
    server = Stdio("--cache-dir", str(cache))
    assert server.request("initialize", INITIALIZE)["result"]["instructions"] == "outdated"
    server.notify("notifications/initialized")
    assert len(server.request("tools/list")["result"]["tools"]) == 24
    code, err = server.close()
    assert code == 0 and "initialize was answered from an outdated card; it is rewritten" in err
    assert json.loads(path.read_text())["card"]["instructions"].startswith("# Retail customer service policy")


@pytest.mark.system
def test_progress_is_quiet_in_pipes_unless_asked(cache: Path) -> None:
    server = Stdio("--cache-dir", str(cache))  # stderr is a pipe here
    server.session()
    code, err = server.close()
    assert code == 0 and "mcpsim:" not in err, err


def test_a_card_holds_while_the_world_package_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "a_world_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("world = None\n")
    (package / "policy.md").write_text("Be kind.\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    card = {"name": "mcpsim-w", "title": "W", "description": "d", "instructions": "Be kind.\n", "version": "1"}
    card |= {"scales": ["small"]}
    write_card(tmp_path / "cards", "w", "a_world_pkg", card)
    assert read_card(tmp_path / "cards", "w") == card
    before = _stamp("a_world_pkg")
    (package / "policy.md").write_text("Be kind, and quick.\n")
    os.utime(package / "policy.md", ns=(1, 1))  # another size and time: another stamp
    assert _stamp("a_world_pkg") != before
    assert read_card(tmp_path / "cards", "w") is None  # a stale card is never used
    assert read_card(tmp_path / "cards", "other") is None
    assert _stamp("no_such_package_here") is None
    (tmp_path / "not-a-folder").write_text("")
    write_card(tmp_path / "not-a-folder", "w", "a_world_pkg", card)  # cannot be written: logged, not raised
    assert read_card(tmp_path / "not-a-folder", "w") is None

    (tmp_path / "a_world_module.py").write_text("world = None\n")  # a world in a single module
    alone = _stamp("a_world_module")
    (tmp_path / "a_neighbour.py").write_text("x = 1\n")  # its folder's other files do not count
    assert _stamp("a_world_module") == alone
    (tmp_path / "a_world_module.py").write_text("world = 1\n")
    assert _stamp("a_world_module") != alone


def _a_world_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    package = tmp_path / "a_world_pkg"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("world = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    card = {"name": "mcpsim-w", "title": "W", "description": "d", "instructions": "Be kind.\n", "version": "1"}
    return card | {"scales": ["small"]}


def test_a_card_is_outdated_once_mcpsims_own_code_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install: editing mcpsim's code changes neither its version nor site-packages,
    but the card's stamp sees it (here on a copy of the package, never the real tree)."""
    copy = tmp_path / "mcpsim_copy"
    shutil.copytree(startup.MCPSIM_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(startup, "MCPSIM_DIR", str(copy))
    card = _a_world_package(tmp_path, monkeypatch)
    write_card(tmp_path / "cards", "w", "a_world_pkg", card)
    assert read_card(tmp_path / "cards", "w") == card
    sources = list(own_sources(str(copy)))
    assert ("serve/_startup.py", os.path.getsize(copy / "serve" / "_startup.py")) in [(p, s) for p, s, _ in sources]
    assert all(p.endswith(".py") and "__pycache__" not in p for p, _, _ in sources)
    (copy / "serve" / "__pycache__").mkdir(exist_ok=True)
    (copy / "serve" / "__pycache__" / "x.pyc").write_bytes(b"")  # compiled files and data do not count
    (copy / "notes.txt").write_text("x")
    assert read_card(tmp_path / "cards", "w") == card
    stat = os.stat(copy / "serve" / "_mcp.py")
    os.utime(copy / "serve" / "_mcp.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # same size
    assert read_card(tmp_path / "cards", "w") is None
    write_card(tmp_path / "cards", "w", "a_world_pkg", card)
    assert read_card(tmp_path / "cards", "w") == card
    (copy / "engine" / "new_module.py").write_text("")  # a new file too
    assert read_card(tmp_path / "cards", "w") is None


def test_a_card_is_written_through_a_temp_file_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process with this pid (another container sharing the cache volume) may be writing
    a temp file named by the pid: the card is still written, and no temp file is left."""
    card = _a_world_package(tmp_path, monkeypatch)
    cards = tmp_path / "cards"
    (cards / f".w.json.{os.getpid()}.tmp").mkdir(parents=True)  # the same-pid writer's file, in the way
    write_card(cards, "w", "a_world_pkg", card)
    assert read_card(cards, "w") == card
    assert sorted(p.name for p in cards.iterdir()) == [f".w.json.{os.getpid()}.tmp", "w.json"]


@pytest.mark.system
def test_a_card_knows_which_tasks_and_fault_profiles_can_be_served(cache: Path, tmp_path: Path) -> None:
    Stdio("--cache-dir", str(cache)).close()  # the card, if the other tests did not write it
    cards = cache / "cards"
    assert usage_problem(cards, "retail", task_id="cancel-pending-order", faults_spec="flaky") is None
    assert usage_problem(cards, "retail", task_id=None, faults_spec='{"name": "x"}') is None  # fields: the load's
    profile = tmp_path / "mine.yaml"
    profile.write_text("name: mine\n")
    assert usage_problem(cards, "retail", task_id=None, faults_spec=str(profile)) is None
    option, reason = usage_problem(cards, "retail", task_id="no-such-task", faults_spec=None) or ("", "")
    assert option == "--task" and reason.startswith("unknown task 'no-such-task' (known: ")
    option, reason = usage_problem(cards, "retail", task_id=None, faults_spec="flakey") or ("", "")
    assert (option, reason) == (
        "--faults",
        "unknown fault profile 'flakey': use none, flaky, hostile, a YAML file or inline JSON",
    )
    option, reason = usage_problem(cards, "retail", task_id=None, faults_spec="{oops") or ("", "")
    assert option == "--faults" and reason.startswith("inline fault profile: ")
    assert (
        usage_problem(cards, "other", task_id="no-such-task", faults_spec="flakey") is None
    )  # no card: the load checks
    assert usage_problem(tmp_path, "retail", task_id="no-such-task", faults_spec=None) is None


@pytest.mark.system
@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("--task", "no-such-task"), "Invalid value for --task: unknown task 'no-such-task'"),
        (("--faults", "flakey"), "Invalid value for --faults: unknown fault profile 'flakey'"),
    ],
)
def test_a_bad_task_or_fault_profile_exits_2_at_once_with_a_card(
    cache: Path, args: tuple[str, ...], reason: str
) -> None:
    Stdio("--cache-dir", str(cache)).close()  # the card, if the other tests did not write it
    server = Stdio("--cache-dir", str(cache), *args)
    stdin, server.proc.stdin = server.proc.stdin, None  # written here, then closed: a client that hangs up
    assert stdin is not None
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
    with contextlib.suppress(BrokenPipeError):  # it may have exited before reading it
        stdin.write(json.dumps(initialize) + "\n")
        stdin.flush()
    with contextlib.suppress(BrokenPipeError):
        stdin.close()
    answered, err = server.proc.communicate(timeout=300)
    assert (server.proc.returncode, answered) == (2, ""), err  # the handshake is never answered
    assert reason in err


def test_serving_stdio_imports_no_database_or_logging_library_before_the_handshake() -> None:
    probe = (
        "import sys, mcpsim, mcpsim.cli, mcpsim.cli._serving, mcpsim.serve._startup; "
        "print(sorted(m for m in ('sqlalchemy', 'sqlmodel', 'structlog', 'faker', 'mcpsim.engine._episode') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=clean_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_every_command_is_found_in_the_module_that_adds_it() -> None:
    from mcpsim.cli._app import COMMANDS, main

    added = {name: command.callback.__module__ for name, command in main.commands.items() if command.callback}
    assert added == {name: module for module, names in COMMANDS.items() for name in names}
