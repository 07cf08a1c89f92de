"""Starting a world: `mcpsim new-world`, which writes the smallest world that passes `mcpsim
check` from the templates in `skeleton/` beside this module (package data), its tasks citing the
data its seeder builds."""

from __future__ import annotations

import json
import keyword
import shutil
import uuid
from pathlib import Path

import click

from mcpsim import logs
from mcpsim.cli._app import _apply, log_options, main
from mcpsim.engine import Episode
from mcpsim.tasks import CANARY_PREFIX
from mcpsim.tasks.datalock import write_lock
from mcpsim.world import World, load_world, searching_worlds_folder, world_folder, world_names, worlds_path

SKELETON = Path(__file__).with_name("skeleton")
CODE = {  # template -> the file it becomes in the world's folder, and what that holds
    "__init__.py.tmpl": ("__init__.py", "the World, read from world.yaml; imports the tools and the seeder"),
    "world.yaml.tmpl": ("world.yaml", "name, title, description, scales and id formats"),
    "policy.md.tmpl": ("policy.md", "what the agent is told"),
    "tables.py.tmpl": ("tables.py", "the tables: books and loans"),
    "tools.py.tmpl": ("tools.py", "a read tool (get_book) and a write tool (lend_book)"),
    "seed.py.tmpl": ("seed.py", "the seeder"),
}
TASKS = ("tasks.yaml.tmpl", "tasks/desk.yaml", "two tasks: a lookup and a confirmed write")
TASK_SEED, TASK_SCALE = 0, "default"  # the data the tasks cite (the task files' defaults)


def _refuse(problem: str) -> click.BadParameter:
    return click.BadParameter(problem, param_hint="NAME")


def _check_name(name: str, target: Path) -> None:
    """Exit 2 unless `name` can be a new world's name and `target` (its folder) is free."""
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        raise _refuse(
            f"{name!r} is not a world name: use a Python identifier that is no keyword and does not start "
            "with '_' (letters, digits and '_', such as library or corner_shop)"
        )
    if target.exists():
        raise _refuse(f"{target} already exists; choose another NAME or --dir")
    if name in world_names():
        raise _refuse(f"a world named {name!r} is already known (see `mcpsim worlds`); choose another NAME")


def _render(template: str, values: dict[str, str]) -> str:
    text = (SKELETON / template).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    if "{{" in text:
        raise RuntimeError(f"{template}: a placeholder has no value: {text[text.index('{{') :][:40]}")
    return text


def _quoted(text: str) -> str:
    """`text` as the inside of a double-quoted YAML (JSON) string."""
    return json.dumps(text)[1:-1]


def _task_values(world: World) -> dict[str, str]:
    """What the tasks cite, read from the data seed 0 builds at the default scale: a book with
    copies to count, another with a copy to lend."""
    episode = Episode.create(world, seed=TASK_SEED, scale=TASK_SCALE)
    try:
        counted = episode.query("SELECT id, title, copies FROM books WHERE copies >= 2 ORDER BY id LIMIT 1")[0]
        lent = episode.query("SELECT id, copies FROM books WHERE copies >= 1 AND id != ? ORDER BY id", (counted["id"],))
    finally:
        episode.close()
    return {
        "lookup_id": counted["id"],
        "lookup_title": _quoted(counted["title"]),
        "lookup_copies": str(counted["copies"]),
        "lend_id": lent[0]["id"],
        "lend_copies_left": str(lent[0]["copies"] - 1),
    }


def _write(target: Path, relative: str, text: str) -> None:
    path = target / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_world(name: str, folder: Path) -> Path:
    """Write the world `name` in `folder / name`: its code and data from the templates, then
    its tasks (citing the seeded data) and their data lock. Nothing is left behind if it fails."""
    target = folder / name
    words = name.replace("_", " ").strip()
    values = {
        "name": name,
        "title": _quoted(words[:1].upper() + words[1:]),
        "Class": "".join(part[:1].upper() + part[1:] for part in name.split("_")),
    }
    target.mkdir(parents=True)
    try:
        for template, (relative, _) in CODE.items():
            _write(target, relative, _render(template, values))
        with searching_worlds_folder(folder):
            values |= _task_values(load_world(name))
            values["canary"] = f"{CANARY_PREFIX} {name} {uuid.uuid4()}"
            _write(target, TASKS[1], _render(TASKS[0], values))
            write_lock(name)
    except BaseException:
        shutil.rmtree(target)
        raise
    return target


@main.command("new-world")
@click.argument("name")
@click.option(
    "--dir",
    "folder",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the world's folder [default: the first folder of MCPSIM_WORLDS_PATH, else a "
    "source checkout's worlds/, else the current folder].",
)
@_apply(log_options)
def new_world(name: str, folder: Path | None, log_level: str, log_format: str) -> None:
    """Write a new world NAME: the smallest that passes `mcpsim check`, to grow into your own.

    DIR/NAME gets the World (__init__.py, world.yaml), its policy, tables, a read and a write tool,
    a seeder, and tasks/ with a lookup task and a confirmed write task (gold actions, rubrics,
    a canary) written against the seeded data, and their data lock. A world in a folder on the
    worlds path (MCPSIM_WORLDS_PATH, a source checkout's worlds/) is found by name without
    installing anything. Exits 2 if NAME is not a Python identifier, is a known world's name, or
    DIR/NAME exists.
    """
    folder = folder if folder is not None else next(iter(worlds_path()), Path.cwd())
    _check_name(name, folder / name)
    logs.configure(log_level, log_format)
    target = write_world(name, folder)
    click.echo(f"Wrote the world {name!r} in {target}:")
    for relative, holds in [*CODE.values(), TASKS[1:], ("tasks/data.lock.json", "the data the tasks cite")]:
        click.echo(f"  {relative:<22} {holds}")
    found = world_folder(name) == target.resolve()
    check = f"mcpsim check {name}" if found else f"MCPSIM_WORLDS_PATH={folder} mcpsim check {name}"
    click.echo(f"Check it: {check}")
    if not found:
        click.echo(f"(add {folder} to MCPSIM_WORLDS_PATH to have mcpsim find {name!r} by name)")
