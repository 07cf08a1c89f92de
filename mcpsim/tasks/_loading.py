"""Loading task files (`load_task_file`, `load_task_dir`), finding a world's task folder
without importing the world, and the registry of tasks registered at run time: `load_tasks`
serves both."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mcpsim._yaml import load_trusted
from mcpsim.tasks._task import TaskFile, TaskSet
from mcpsim.world import world_folder

__all__ = [
    "TaskFileError",
    "load_task_dir",
    "load_task_file",
    "load_tasks",
    "register_tasks",
    "task_folder",
    "task_registrations",
]


class TaskFileError(ValueError):
    pass


def load_task_file(path: Path) -> TaskFile:
    """The task file at `path`, parsed once per process for each content it has had: a file read
    again with the same text (the CLI and the world host both load a world's tasks) is read, not
    parsed. A `TaskFile` is frozen, so the one object serves every caller."""
    return _parsed(str(path), path.read_text(encoding="utf-8"))


@lru_cache(maxsize=64)  # files: a process loads a few worlds; a server of many cycles through
def _parsed(path: str, text: str) -> TaskFile:
    try:
        return TaskFile.model_validate(load_trusted(text))
    except (yaml.YAMLError, ValidationError) as exc:
        raise TaskFileError(f"{path}: {exc}") from None


def load_task_dir(world: str, folder: Path) -> TaskSet:
    files: list[TaskFile] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        f = load_task_file(path)
        if f.world != world:
            raise TaskFileError(f"{path}: declares world {f.world!r}, but lies in {world!r}'s folder")
        for t in f.tasks:
            if t.id in seen:
                raise TaskFileError(f"{path}: task id {t.id!r} also in {seen[t.id]}")
            seen[t.id] = path
        files.append(f)
    return TaskSet(world=world, files=files)


def task_folder(world: str) -> Path:
    """`<world package>/tasks`, found from the world's entry point (or its folder on the worlds
    path, `mcpsim.world.world_folder`) without importing the world."""
    for ep in entry_points(group="mcpsim.worlds"):
        if ep.name == world:
            spec = importlib.util.find_spec(ep.module)
            if spec is None or not spec.submodule_search_locations:
                raise TaskFileError(f"world {world!r} ({ep.module}) is not a package; it has no task folder")
            return Path(next(iter(spec.submodule_search_locations))) / "tasks"
    folder = world_folder(world)
    if folder is not None:
        return folder / "tasks"
    raise LookupError(f"unknown world {world!r}")


_registered: dict[str, Callable[[], TaskSet]] = {}
_loaded: dict[str, TaskSet] = {}


def task_registrations() -> list[dict[str, Any]]:
    """The task registry and its loaded task sets, for code that puts them back as they were
    (`mcpsim.catalogue.worlds_registered_here_removed`)."""
    return [_registered, _loaded]


_loading = threading.Lock()  # a registered world's tasks are built once, whichever thread asks first


def register_tasks(world: str, tasks: Callable[[], TaskSet]) -> None:
    """The tasks of a world registered at run time (`mcpsim.world._registry.register_world`):
    `tasks()` is called once, the first time they are loaded."""
    _registered[world] = tasks
    _loaded.pop(world, None)


def load_tasks(world: str) -> TaskSet:
    if world in _registered:
        with _loading:
            if world not in _loaded:
                _loaded[world] = _registered[world]()
            return _loaded[world]
    return load_task_dir(world, task_folder(world))
