"""What a command's arguments name, found or refused with a usage error that says what is known: a
world (at a scale), its built templates, its tasks, a fault profile."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from mcpsim.engine import TemplateCache
    from mcpsim.world import World

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mcpsim" / "templates"


def find_world(name: str) -> World:
    from mcpsim.world import UnknownWorld, load_world

    try:
        return load_world(name)
    except UnknownWorld as exc:
        raise click.BadParameter(str(exc), param_hint="WORLD") from None


def world_at_scale(name: str, scale: str) -> World:
    w = find_world(name)
    try:
        w.scale_params(scale)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scale") from None
    return w


def open_templates(cache_dir: str | None, no_cache: bool) -> TemplateCache:
    from mcpsim.engine import TemplateCache

    return TemplateCache(None if no_cache else Path(cache_dir) if cache_dir else DEFAULT_CACHE)


def lookup_message(exc: LookupError) -> str:
    """A lookup error's message as written (`str()` of a KeyError adds quotes around it)."""
    return str(exc.args[0]) if exc.args else str(exc)


def find_tasks(world: str) -> Any:
    from mcpsim.tasks import TaskFileError, load_tasks

    find_world(world)  # an unknown world: its name and the known ones
    try:
        return load_tasks(world)
    except TaskFileError as exc:
        raise click.ClickException(str(exc)) from None
    except LookupError as exc:
        raise click.BadParameter(lookup_message(exc), param_hint="WORLD") from None


def find_profile(spec: str | None) -> Any:
    from mcpsim.engine import FaultProfileError, load_profile

    try:
        return load_profile(spec)
    except FaultProfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--faults") from None
