"""Worlds are found without reinstalling: a world folder dropped into a folder of the worlds path
(MCPSIM_WORLDS_PATH, a source checkout's worlds/) is found by name at once, in the process and
by the `mcpsim` commands; installed worlds (entry points) are still found, and first; without a
path, a test process sees exactly the installed worlds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from mcpsim.tasks import load_tasks
from mcpsim.tasks._loading import task_folder
from mcpsim.testing._driver import clean_env
from mcpsim.world import GROUP, UnknownWorld, World, load_world, world_folder, world_names, worlds_path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
INSTALLED = sorted(ep.name for ep in entry_points(group=GROUP))

WORLD_PACKAGE = '''
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel, select

from mcpsim.world import ToolContext, World


class Table(SQLModel, registry=registry()):
    pass


class Note(Table, table=True):
    __tablename__ = "notes"
    id: str = Field(primary_key=True)


world = World("{name}", title="Notes", description="Notes.", metadata=Table.metadata, policy="Be kind.",
              scales={{"default": {{}}}})


@world.tool(read_only=True)
def count_notes(ctx: ToolContext) -> int:
    """How many notes there are, counted in the whole notebook."""
    return len(ctx.session.exec(select(Note)).all())


@world.seeder
def seed(ctx) -> None:
    pass
'''


def drop_world(folder: Path, name: str, world_name: str | None = None) -> Path:
    """A world package `folder/name` whose World is called `world_name` (default: `name`)."""
    package = folder / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(WORLD_PACKAGE.format(name=world_name or name))
    return package


@pytest.fixture
def worlds_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on MCPSIM_WORLDS_PATH for this test only (`load_world`'s cache cleared after it)."""
    folder = tmp_path / "worlds"
    folder.mkdir()
    monkeypatch.setenv("MCPSIM_WORLDS_PATH", str(folder))
    yield folder
    load_world.cache_clear()


def test_without_a_path_a_test_process_sees_exactly_the_installed_worlds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPSIM_WORLDS_PATH", raising=False)
    assert world_names() == INSTALLED
    assert {"airline", "bank", "retail", "workspace"} <= set(INSTALLED)


def test_a_world_dropped_into_a_folder_on_the_path_is_found_at_once(worlds_folder: Path) -> None:
    assert "notebook" not in world_names()
    with pytest.raises(UnknownWorld):
        load_world("notebook")
    package = drop_world(worlds_folder, "notebook")
    drop_world(worlds_folder, "_private")  # not a world: starts with '_'
    drop_world(worlds_folder, "not-a-name")  # not a world: no identifier
    (worlds_folder / "loose.py").write_text("world = None\n")  # not a folder
    assert world_names() == sorted([*INSTALLED, "notebook"])
    assert worlds_path()[0] == worlds_folder.resolve()
    world = load_world("notebook")
    assert isinstance(world, World) and world.name == "notebook" and set(world.tools) == {"count_notes"}
    assert world_folder("notebook") == package.resolve()
    assert task_folder("notebook") == package.resolve() / "tasks" and load_tasks("notebook").tasks == []
    with pytest.raises(
        UnknownWorld, match=r"unknown world 'notebok' \(known: airline, bank, notebook, research, retail"
    ):
        load_world("notebok")


def test_installed_worlds_are_still_found_and_win_over_a_folder_of_the_same_name(worlds_folder: Path) -> None:
    drop_world(worlds_folder, "retail")
    assert world_names() == INSTALLED  # once
    for name in INSTALLED:
        assert load_world(name).name == name
    assert load_world("retail").tools["get_order_details"].fn.__module__.startswith("mcpsim_worlds.retail.")
    assert world_folder("retail") is None
    assert task_folder("retail") == ROOT / "worlds" / "retail" / "tasks"


def test_the_first_folder_on_the_path_holding_a_name_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    drop_world(first, "notes")
    drop_world(second, "notes")
    drop_world(second, "jots")
    monkeypatch.setenv("MCPSIM_WORLDS_PATH", os.pathsep.join(map(str, [first, tmp_path / "missing", second])))
    try:
        assert world_names() == sorted([*INSTALLED, "jots", "notes"])
        assert world_folder("notes") == (first / "notes").resolve()
        assert world_folder("jots") == (second / "jots").resolve()
    finally:
        load_world.cache_clear()


def test_a_world_folder_named_otherwise_than_its_world_is_refused_clearly(worlds_folder: Path) -> None:
    drop_world(worlds_folder, "jotter", world_name="notes")
    with pytest.raises(ValueError, match="holds the world 'notes': a world folder is named after its world"):
        load_world("jotter")


def test_mcpsim_commands_find_a_world_on_the_path(worlds_folder: Path) -> None:
    drop_world(worlds_folder, "notebook")
    env = clean_env() | {"MCPSIM_WORLDS_PATH": str(worlds_folder)}
    out = subprocess.run(
        [sys.executable, "-m", "mcpsim", "tools", "notebook"], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "count_notes" in out.stdout


def test_a_world_written_into_a_source_checkouts_worlds_is_found_without_reinstalling(tmp_path: Path) -> None:
    """A copy of the checkout (mcpsim, pyproject.toml, worlds/ importable as mcpsim_worlds):
    `mcpsim new-world shop` writes into its worlds/, and `mcpsim check shop` finds it at once."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "mcpsim", checkout / "mcpsim", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", checkout / "pyproject.toml")
    (checkout / "worlds").mkdir()
    shutil.copy(ROOT / "worlds" / "__init__.py", checkout / "worlds" / "__init__.py")
    (checkout / "mcpsim_worlds").symlink_to(checkout / "worlds")  # what an editable install maps
    env = clean_env() | {"PYTHONPATH": str(checkout)}

    def mcpsim(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "mcpsim", *args]
        return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)

    made = mcpsim("new-world", "shop")
    assert made.returncode == 0, made.stdout + made.stderr
    assert (checkout / "worlds" / "shop" / "tasks" / "data.lock.json").is_file()
    assert "Check it: mcpsim check shop" in made.stdout
    checked = mcpsim("check", "shop")
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    probe = "from mcpsim.world import load_world; print(load_world('shop').tools['get_book'].fn.__module__)"
    imported = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert imported.stdout.strip() == "mcpsim_worlds.shop.tools", imported.stdout + imported.stderr
