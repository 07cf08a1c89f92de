"""Worlds loaded from spec files into this process's registry, so every command serves, runs,
checks and lists them as it does installed worlds (`--world-spec FILE`, `--worlds-dir DIR`).
Nothing is written to disk: each process compiles the spec again.

A spec world's tasks are those of its task file, if it has one (`NAME.tasks.yaml` beside
`NAME.yaml`, or `tasks/NAME.yaml` beside a `worlds/` folder, as `mcpsim gen --catalog` writes
them), else the spec's `generated_tasks` generated at seed 0 (the same in every process); then
the tasks the spec declares. A twin spec (`mcpsim gen --from-mcp`) is loaded the same way: its
world is `compile_twin`'s, its tasks those of its task file (`NAME.tasks.yaml` beside
`NAME.json`, as `mcpsim gen --from-mcp --tasks N` writes it), else `TWIN_TASKS` generated ones."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from mcpsim._sandbox import CompileLimits, CompileRefused, run_now
from mcpsim.engine import Episode, TemplateCache
from mcpsim.specs import CompiledWorld, SpecError, compile_spec, load_spec
from mcpsim.taskgen import generate_tasks, task_set
from mcpsim.tasks import Task, TaskFile, TaskFileError, TaskSet, load_task_file, register_tasks, task_registrations
from mcpsim.twins import TwinSpec, compile_twin, generate_twin_tasks, is_twin_file, load_twin, twin_task_set
from mcpsim.world import World, load_world, register_world, world_registrations

SPEC_SUFFIXES = (".yaml", ".yml", ".json")
T = TypeVar("T")
TASK_SEED = 0
TWIN_TASKS = 10  # tasks generated for a twin without a task file

_sources: list[tuple[str, str]] = []  # (option, absolute path) of what this process loaded
_names: list[str] = []  # the worlds it loaded, in order


def spec_files(folder: str | Path) -> list[Path]:
    """The spec files directly in `folder` (YAML or JSON, not task files), in name order."""
    path = Path(folder)
    if not path.is_dir():
        raise SpecError(f"{path}: not a directory")
    return sorted(
        p for p in path.iterdir() if p.is_file() and p.suffix in SPEC_SUFFIXES and not p.name.endswith(".tasks.yaml")
    )


def task_file_of(path: str | Path) -> Path | None:
    """The task file written for a spec file, if there is one: `NAME.tasks.yaml` beside it, or
    `../tasks/NAME.yaml` for a spec in a `worlds/` folder."""
    path = Path(path)
    sibling = path.with_name(f"{path.stem}.tasks.yaml")
    if sibling.is_file():
        return sibling
    beside = path.parent.parent / "tasks" / path.name
    return beside if path.parent.name == "worlds" and beside.is_file() else None


def spec_tasks(
    compiled: CompiledWorld, task_file: Path | None = None, generate: Callable[[], list[Task]] | None = None
) -> TaskSet:
    """A spec world's tasks: its task file's, or `generated_tasks` generated ones (by `generate`
    if given: in the sandbox, `_generated_in_sandbox`); then the ones the spec declares. Safe to
    call from a thread that runs an event loop (the generation then runs in a worker thread: the
    audit it runs starts an event loop of its own)."""
    spec = compiled.spec
    if task_file is not None:
        written = _task_file(task_file, spec.name)
        tasks = task_set(compiled, spec.tasks)
        return TaskSet(world=spec.name, files=[written, *(tasks.files if spec.tasks else [])])
    count = spec.generated_tasks
    make = generate or (lambda: generate_tasks(compiled, count=count, seed=TASK_SEED))
    generated = _off_the_loop(make) if count else []
    return task_set(compiled, [*generated, *spec.tasks])


def twin_tasks(
    spec: TwinSpec, task_file: Path | None = None, generate: Callable[[], list[Task]] | None = None
) -> TaskSet:
    """A twin's tasks: its task file's (as `mcpsim gen --from-mcp --tasks N` writes it), else
    `TWIN_TASKS` generated at seed 0 (the same in every process). Safe to call from a thread that
    runs an event loop, like `spec_tasks`."""
    if task_file is not None:
        written = _task_file(task_file, spec.name)
        return TaskSet(world=spec.name, files=[written])
    generated = _off_the_loop(generate or (lambda: generate_twin_tasks(spec, count=TWIN_TASKS, seed=TASK_SEED)))
    return twin_task_set(spec, generated)


def _task_file(path: Path, world: str) -> TaskFile:
    written = load_task_file(path)
    if written.world != world:
        raise TaskFileError(f"{path}: its tasks are for world {written.world!r}, not {world!r}")
    return written


def compiled_file(path: str | Path, sandbox: CompileLimits | None = None) -> tuple[World, Callable[[], TaskSet]]:
    """A spec file's world, compiled, and its tasks as a deferred call (generated in the sandbox,
    within `sandbox`, when given and the file has no task file)."""
    task_file = task_file_of(path)
    generate = partial(_generated_in_sandbox, path, sandbox) if sandbox is not None and task_file is None else None
    if is_twin_file(path):
        twin = _twin(path)
        return compile_twin(twin), partial(twin_tasks, twin, task_file, generate)
    compiled = compile_spec(load_spec(path))
    return compiled.world, partial(spec_tasks, compiled, task_file, generate)


def _twin(path: str | Path) -> TwinSpec:
    try:
        return load_twin(path)
    except ValueError as exc:  # past its bound, or not a twin spec (the message names the file)
        raise SpecError(str(exc)) from None


class SpecTaskGeneration:
    """What the sandbox runs to generate a spec file's tasks when it has no task file: the tasks
    `spec_tasks` (or `twin_tasks`) would generate here, as JSON. The generator runs the world's
    tools many times over (its audit), so it is the costliest work an untrusted spec asks for."""

    def __call__(self, path: str) -> list[dict[str, Any]]:
        if is_twin_file(path):
            made = generate_twin_tasks(_twin(path), count=TWIN_TASKS, seed=TASK_SEED)
        else:
            compiled = compile_spec(load_spec(path))
            count = compiled.spec.generated_tasks
            made = generate_tasks(compiled, count=count, seed=TASK_SEED) if count else []
        return [task.model_dump(mode="json") for task in made]


def _generated_in_sandbox(path: str | Path, limits: CompileLimits) -> list[Task]:
    """`SpecTaskGeneration` in the sandbox, its tasks read back (a TaskFileError if it fails)."""
    try:
        said = run_now(SpecTaskGeneration(), str(path), limits)
    except CompileRefused as exc:
        raise TaskFileError(
            f"{path}: generating its tasks was refused in its sandbox: {exc} (the MCPSIM_COMPILE_CPU_SECONDS, "
            "MCPSIM_COMPILE_MEMORY and MCPSIM_COMPILE_TIMEOUT limits; or write its tasks to a task file)"
        ) from None
    if not isinstance(said, list):
        raise TaskFileError(f"{path}: its sandbox sent back no list of tasks")
    try:
        return [Task.model_validate(data) for data in said]
    except (ValidationError, TypeError) as exc:
        raise TaskFileError(f"{path}: the tasks its sandbox generated do not read back: {exc}") from None


class SpecFileCheck:
    """What the sandbox runs for a spec file before this process compiles it: read and compile it
    as `register_spec` does, then seed its world at seed 0 at its first scale (every Faker and row
    generator the spec configures runs there; other scales run the same ones more or fewer
    times). Returns {"world": its name}, or {"error": the spec's problem} (a SpecError's message,
    which the caller raises as it would have itself)."""

    def __call__(self, path: str) -> dict[str, str]:
        try:
            world, _ = compiled_file(path)
        except SpecError as exc:
            return {"error": str(exc)}
        Episode.create(world, TASK_SEED, next(iter(world.scales)), templates=TemplateCache(None)).close()
        return {"world": world.name}


def register_spec(path: str | Path, *, sandbox: CompileLimits | None = None) -> World:
    """Compile a spec file (a world spec, or a twin spec as `mcpsim gen --from-mcp` writes it) and
    register its world and (lazily loaded or generated) tasks in this process. With `sandbox`, the
    file is first compiled and seeded in a child process within those limits (`SpecFileCheck`;
    the CLI's `--world-spec` and `--worlds-dir` do so), and a failure there is a SpecError."""
    if sandbox is not None:
        try:
            said = run_now(SpecFileCheck(), str(path), sandbox)
        except CompileRefused as exc:
            raise SpecError(f"{path}: refused in its sandbox: {exc}") from None
        if isinstance(said, dict) and "error" in said:
            raise SpecError(str(said["error"]))
    world, tasks = compiled_file(path, sandbox)
    try:
        register_world(world)
    except ValueError as exc:
        raise SpecError(f"{path}: {exc}") from None
    register_tasks(world.name, tasks)
    _sources.append(("--world-spec", str(Path(path).resolve())))
    if world.name not in _names:
        _names.append(world.name)
    return world


@contextmanager
def worlds_registered_here_removed() -> Iterator[None]:
    """Inside the block, worlds may be registered at run time (`register_world`, a `--world-spec`,
    a shipped spec); when it ends, this process's registries are as they were: the world
    registry, the task registry (and its loaded task sets), the spec loader's list of sources that
    child processes and Ray workers are given, and `load_world`'s cache."""
    kept: list[tuple[dict[str, Any], dict[str, Any]]] = [
        (registry, dict(registry)) for registry in (*world_registrations(), *task_registrations())
    ]
    sources, names = list(_sources), list(_names)
    try:
        yield
    finally:
        if any(now != then for now, then in kept) or _sources != sources or _names != names:
            for now, then in kept:
                now.clear()
                now.update(then)
            _sources[:] = sources
            _names[:] = names
            load_world.cache_clear()


def _off_the_loop(build: Callable[[], T]) -> T:
    """`build()`, in a worker thread if this thread runs an event loop (the audit the generator
    runs starts one of its own, which cannot nest)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return build()
    with ThreadPoolExecutor(1, thread_name_prefix="mcpsim-taskgen") as pool:
        return pool.submit(build).result()


def register_folder(folder: str | Path, *, sandbox: CompileLimits | None = None) -> list[World]:
    """`register_spec` for every spec file directly in `folder`, in name order."""
    return [register_spec(p, sandbox=sandbox) for p in spec_files(folder)]


def loaded_worlds() -> list[str]:
    """The names of the worlds this process loaded from specs."""
    return list(_names)


def loaded_sources() -> list[str]:
    """The options that load, in another process, the specs this one loaded (for its subprocesses)."""
    return [part for option, path in _sources for part in (option, path)]


@dataclass(frozen=True)
class ShippedSpec:
    """A spec file this process loaded, as text, for a process on another machine (a Ray worker)
    to load the same world with the same tasks: the file's name, its text and its task file's."""

    name: str
    text: str
    tasks: str | None = None


def shipped_specs() -> list[ShippedSpec]:
    """Every spec file this process loaded (in order), with its task file, as text."""
    shipped = []
    for _, source in _sources:
        path = Path(source)
        task_file = task_file_of(path)
        tasks = task_file.read_text(encoding="utf-8") if task_file is not None else None
        shipped.append(ShippedSpec(path.name, path.read_text(encoding="utf-8"), tasks))
    return shipped


def register_shipped(specs: Sequence[ShippedSpec], folder: str | Path | None = None) -> list[World]:
    """Load worlds another process shipped (`shipped_specs`): each spec is written to a folder of
    its own under `folder` with its task file beside it (`NAME.tasks.yaml`, which `task_file_of`
    finds first) and registered as `--world-spec` registers it (again, if this process has it).

    The files stay: tasks are read from them when first asked for. By default `folder` is named
    after the specs' content in the system's temporary folder (`shipped_folder`), so every worker
    of a machine, and every later run with the same specs, writes to (and leaves) the same one
    folder, not one each; files are replaced atomically, so workers starting together never read
    a half-written one."""
    root = Path(folder) if folder is not None else shipped_folder(specs)
    if folder is None:
        root.mkdir(mode=0o700, exist_ok=True)  # this user's alone: nobody else swaps a task file in
    worlds = []
    for number, spec in enumerate(specs):
        where = root / str(number)
        where.mkdir(parents=True, exist_ok=True)
        path = where / spec.name
        _write_once(path, spec.text)
        if spec.tasks is not None:
            _write_once(path.with_name(f"{path.stem}.tasks.yaml"), spec.tasks)
        worlds.append(register_spec(path))
    return worlds


def shipped_folder(specs: Sequence[ShippedSpec]) -> Path:
    """The folder `register_shipped` writes `specs` to by default: one per user and distinct content."""
    digest = hashlib.sha256(json.dumps([[s.name, s.text, s.tasks] for s in specs]).encode()).hexdigest()[:20]
    owner = f"{os.getuid()}-" if hasattr(os, "getuid") else ""  # another user's folder is never shared
    return Path(tempfile.gettempdir()) / f"mcpsim-specs-{owner}{digest}"


def _write_once(path: Path, text: str) -> None:
    """Write `text` to `path` unless it already holds it; through a temporary file renamed over it."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
