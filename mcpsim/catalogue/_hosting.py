"""Spec worlds for the lazy world host (`mcpsim.serve._worlds`): the names of the spec files in a
folder, and a loader that compiles one spec, with its tasks, when the host first needs it."""

from __future__ import annotations

from pathlib import Path

from mcpsim.catalogue._loading import spec_files, spec_tasks
from mcpsim.specs import CompiledWorld, SpecError, compile_spec, load_spec
from mcpsim.tasks import TaskSet
from mcpsim.world import World


def spec_world_loader(folder: str | Path) -> tuple[list[str], SpecFolderLoader]:
    """The world names a folder offers (its spec files' names, without compiling them) and
    their loader."""
    paths = {p.stem: p for p in spec_files(folder)}
    return sorted(paths), SpecFolderLoader(paths)


class SpecFolderLoader:
    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths

    def compiled(self, name: str) -> CompiledWorld:
        path = self.paths[name]
        compiled = compile_spec(load_spec(path))
        if compiled.spec.name != name:
            raise SpecError(f"{path}: the spec's name is {compiled.spec.name!r}, not its file's {name!r}")
        return compiled

    def __call__(self, name: str) -> tuple[World, TaskSet]:
        """The world with its tasks (generated as the loader does: `mcpsim.catalogue._loading`)."""
        compiled = self.compiled(name)
        return compiled.world, spec_tasks(compiled)

    def world(self, name: str) -> World:
        """The world alone, for its tools (distractors): no tasks generated."""
        return self.compiled(name).world
