"""`mcpsim new-world` writes a world that passes `mcpsim check` (the real commands, in child
processes, on a folder of the worlds path) and refuses a bad name, a taken name and an existing
folder; the world it writes and the guide's example world keep the world contract
(tests/world/test_contract.py's rules, run here on those two worlds); and the guide's rule that
within one call a row is written through the ORM or with plain SQL, not both, holds where it is
enforced."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from fnmatch import fnmatch
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine
from sqlalchemy.orm import registry
from sqlmodel import Field as Column
from sqlmodel import Session, SQLModel

from mcpsim.cli import main
from mcpsim.cli._authoring import SKELETON, write_world
from mcpsim.engine import Episode
from mcpsim.testing._driver import WorldDriver, clean_env
from mcpsim.world import SeedContext, ToolContext, World, load_world, searching_worlds_folder, sql, world_names
from tests.world.test_contract import (  # the contract's rules, run on the worlds of the `world` fixture below
    test_every_error_is_a_business_error_and_a_refused_call_changes_nothing,
    test_read_only_tools_change_nothing_whatever_valid_arguments_they_get,
    test_the_policy_is_served_as_instructions_and_as_a_resource,
    test_the_same_seed_builds_the_same_world_and_another_seed_another,
    test_tools_are_listed_with_schemas_and_the_hints_their_specs_declare,
)

pytestmark = pytest.mark.anyio

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
GUIDE = ROOT / "docs" / "writing-a-world.md"
CONTRACT = [
    test_every_error_is_a_business_error_and_a_refused_call_changes_nothing,
    test_read_only_tools_change_nothing_whatever_valid_arguments_they_get,
    test_the_policy_is_served_as_instructions_and_as_a_resource,
    test_the_same_seed_builds_the_same_world_and_another_seed_another,
    test_tools_are_listed_with_schemas_and_the_hints_their_specs_declare,
]


def mcpsim(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpsim", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_new_world_writes_a_world_that_passes_check(tmp_path: Path) -> None:
    folder = tmp_path / "my-worlds"
    made = mcpsim("new-world", "library", "--dir", str(folder), env=clean_env(), cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    target = folder / "library"
    written = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if "__pycache__" not in p.parts)
    assert written == [
        "__init__.py",
        "policy.md",
        "seed.py",
        "tables.py",
        "tasks",
        "tasks/data.lock.json",
        "tasks/desk.yaml",
        "tools.py",
        "world.yaml",
    ]
    assert f"MCPSIM_WORLDS_PATH={folder} mcpsim check library" in made.stdout  # --dir is not on the path
    assert "{{" not in "".join(p.read_text() for p in target.rglob("*") if p.is_file() and p.suffix != ".pyc")
    checked = mcpsim("check", "library", "--json", env=clean_env() | {"MCPSIM_WORLDS_PATH": str(folder)}, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    (report,) = json.loads(checked.stdout)
    assert report["ok"] and [t["task_id"] for t in report["tasks"]] == ["copies-on-the-shelf", "lend-a-book"]
    assert all(t["ok"] and t["gold_reward"] == 1.0 and t["noop_reward"] == 0.0 for t in report["tasks"])


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("my-world", "'my-world' is not a world name"),
        ("2shop", "'2shop' is not a world name"),
        ("class", "'class' is not a world name"),
        ("_hidden", "'_hidden' is not a world name"),
        ("retail", "a world named 'retail' is already known"),
    ],
)
def test_new_world_refuses_a_name_that_is_no_identifier_or_is_taken(tmp_path: Path, name: str, problem: str) -> None:
    result = CliRunner().invoke(main, ["new-world", name, "--dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert problem in " ".join(result.output.split())
    assert list(tmp_path.iterdir()) == []


def test_new_world_refuses_an_existing_folder_and_leaves_it_alone(tmp_path: Path) -> None:
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(main, ["new-world", "library", "--dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "already exists; choose another NAME or --dir" in " ".join(result.output.split())
    assert [p.name for p in (tmp_path / "library").iterdir()] == ["notes.txt"]


def test_a_plain_install_ships_the_templates() -> None:
    """Every file new-world reads is matched by a package-data pattern of pyproject.toml (the wheel
    test in test_deployment.py builds one and checks the modules)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["mcpsim"]
    templates = [p.relative_to(ROOT / "mcpsim").as_posix() for p in SKELETON.iterdir()]
    assert templates and all(any(fnmatch(t, pattern) for pattern in patterns) for t in templates), templates


# -- the world contract, on the world new-world writes and on the guide's example ----------------------------


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("worlds")
    write_world("starter", folder)
    with searching_worlds_folder(folder):
        yield load_world("starter")
    assert "starter" not in world_names()  # found while its folder was searched, not after


@pytest.fixture(scope="module")
def guide_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The guide's complete example, imported as a module of its own."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    script = tmp_path_factory.mktemp("guide") / "guide_library.py"
    script.write_text(next(b for b in blocks if "world = World(" in b and "Episode.create" in b))
    spec = importlib.util.spec_from_file_location("guide_library", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["guide_library"] = module
    spec.loader.exec_module(module)
    assert isinstance(module.world, World)
    return module.world


@pytest.fixture(params=["the guide's example", "new-world's skeleton"])
def world(request: pytest.FixtureRequest) -> World:
    fixture = "guide_world" if request.param == "the guide's example" else "skeleton"
    found: World = request.getfixturevalue(fixture)
    return found


@pytest.fixture
def driver(world: World, world_driver: Callable[..., WorldDriver]) -> WorldDriver:
    return world_driver(world)


def test_the_contract_tests_run_here_are_all_that_take_a_world() -> None:
    """A rule added to the contract test is run on these worlds too (the stdio one takes a world's
    name: a child process cannot import these two)."""
    contract = sys.modules[test_tools_are_listed_with_schemas_and_the_hints_their_specs_declare.__module__]
    rules = {
        name
        for name, test in vars(contract).items()
        if name.startswith("test_") and "world" in test.__code__.co_varnames[: test.__code__.co_argcount]
    }
    assert rules == {test.__name__ for test in CONTRACT}


# -- one data-access style: a row is written through the ORM or with plain SQL within a call, not both --------


class ShelfTable(SQLModel, registry=registry()):
    pass


class Shelf(ShelfTable, table=True):
    __tablename__ = "shelves"
    id: str = Column(primary_key=True)
    books: int


shelves = World(
    "shelves", title="Shelves", description="Shelves.", metadata=ShelfTable.metadata, policy="-", scales={"default": {}}
)


@shelves.seeder
def _seed(ctx: SeedContext) -> None:
    ctx.insert(Shelf, [{"id": "S1", "books": 1}, {"id": "S2", "books": 1}])


@shelves.tool()
def add_a_book(ctx: ToolContext, shelf_id: str, count_on: str) -> int:
    """Put a book on a shelf (through the ORM), then set another shelf's count (with plain SQL)."""
    shelf = ctx.get(Shelf, shelf_id)
    shelf.books += 1
    ctx.add(shelf)
    sql.update(ctx, Shelf, count_on, books=5)
    return shelf.books


def test_a_plain_update_of_a_row_with_pending_orm_changes_is_refused_as_a_bug() -> None:
    episode = Episode.create(shelves, seed=0, scale="default")
    try:
        before = episode.state_hash()
        mixed = episode.call("add_a_book", {"shelf_id": "S1", "count_on": "S1"})
        assert mixed.bug and episode.state_hash() == before
        apart = episode.call("add_a_book", {"shelf_id": "S1", "count_on": "S2"})  # two rows, one way each
        assert not apart.is_error and apart.value == 2
        assert episode.query("SELECT id, books FROM shelves ORDER BY id") == [
            {"id": "S1", "books": 2},
            {"id": "S2", "books": 5},
        ]
    finally:
        episode.close()
    engine = create_engine("sqlite://")
    ShelfTable.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Shelf(id="S1", books=1))
        session.commit()
        shelf = session.get(Shelf, "S1")
        assert shelf is not None
        shelf.books = 2  # a change the ORM has not written yet
        with pytest.raises(TypeError, match="shelves S1: a plain SQL update of a row with ORM changes not yet written"):
            sql.update(session, Shelf, "S1", books=3)
    engine.dispose()
