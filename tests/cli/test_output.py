"""The CLI's output for people and for pipes: every command that prints a table also prints it as
JSON with `--json` (the same values), and its table reads whole at 80 columns in a pipe (no
line wider, nothing cut to an ellipsis). In-process, click's CliRunner (a pipe: 80 columns)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.cli import main


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _readable(table: str) -> list[str]:
    lines = table.splitlines()
    assert lines and all(len(line) <= 80 for line in lines), table
    assert "…" not in table, table
    return lines


def _row(lines: list[str], key: str) -> list[str]:
    """The cells of the first line of the row starting with `key`."""
    return next(line.split() for line in lines if line.split()[:1] == [key])


def test_worlds() -> None:
    listed = {w["name"]: w for w in json.loads(_invoke("worlds", "--json"))}
    lines = _readable(_invoke("worlds"))
    for name, world in listed.items():
        cells = _row(lines, name)
        assert cells[1:3] == [str(world["tools"]), str(len(world["tables"]))]
        assert world["version"][:12] in cells
        assert set(world["scales"]) == {"small", "default", "large"} and world["title"]


def test_tools() -> None:
    described = json.loads(_invoke("tools", "retail", "--json"))
    lines = _readable(_invoke("tools", "retail"))
    assert len(described) == 24
    for tool in described:
        cells = _row(lines, tool["name"])  # names of up to 32 characters stay whole
        assert cells[1] == "read" if tool["read_only"] else cells[1].startswith("write")


def test_tasks() -> None:
    tasks = json.loads(_invoke("tasks", "airline", "--json"))  # the longest task ids: they fold, whole
    table = _invoke("tasks", "airline")
    lines = _readable(table)
    assert len(tasks) > 20
    flat = "".join(line.split()[0] for line in lines[2:] if line[:1] != " ")  # the task column, unfolded
    for task in tasks:
        assert task["id"] in flat
    first = tasks[0]
    cells = _row(lines, lines[2].split()[0])
    assert cells[1:5] == [first["difficulty"], first["split"], str(len(first["gold"])), str(len(first["rubric"]))]


def test_build(tmp_path: Path) -> None:
    built = json.loads(_invoke("build", "retail", "--scale", "small", "--cache-dir", str(tmp_path), "--json"))
    lines = _readable(_invoke("build", "retail", "--scale", "small", "--cache-dir", str(tmp_path)))
    assert lines[:2] == [
        f"retail small seed 0: {sum(built['rows'].values())} rows",
        f"state hash {built['state_hash']}",
    ]
    for table, count in built["rows"].items():
        assert _row(lines, table) == [table, str(count)]


def test_build_shows_progress_on_stderr_only_when_asked(tmp_path: Path) -> None:
    args = ["build", "retail", "--scale", "small", "--cache-dir", str(tmp_path), "--json"]
    quiet = CliRunner().invoke(main, args)
    assert "mcpsim:" not in quiet.stderr  # a pipe: no progress
    shown = CliRunner().invoke(main, [*args, "--progress"])
    assert shown.exit_code == 0, shown.output
    assert "mcpsim: template loaded from the cache in" in shown.stderr  # the first run built it
    assert json.loads(shown.stdout)["world"] == "retail"  # stdout stays the output alone


def test_verify(tmp_path: Path) -> None:
    from mcpsim.tasks import load_tasks
    from mcpsim.tasks._scenario import task_episode
    from mcpsim.world._registry import load_world

    task = load_tasks("retail").get("cancel-pending-order")
    snapshot = tmp_path / "episode.db"
    snapshot.write_bytes(task_episode(load_world("retail"), task).snapshot())
    args = ["verify", "retail", "--task", task.id, "--snapshot", str(snapshot)]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 1  # nothing was done: the task fails
    verdict = json.loads(result.stdout)
    assert verdict["passed"] is False and verdict["checks"]
    report = CliRunner().invoke(main, args).stdout
    assert report.startswith(f"FAIL {task.id}: reward 0")
    for check in verdict["checks"]:
        assert check["requirement"] in report


@pytest.mark.parametrize("command", ["worlds", "tools", "build", "tasks", "check", "verify", "run", "demo"])
def test_every_table_command_documents_json(command: str) -> None:
    help_text = _invoke(command, "--help")
    assert "--json" in help_text
