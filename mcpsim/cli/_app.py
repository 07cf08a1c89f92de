"""The `mcpsim` command group and what its commands share."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from mcpsim.engine.templates import TemplateCache
from mcpsim.world import World
from mcpsim.world.registry import UnknownWorld, load_world

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mcpsim" / "templates"


def _world(name: str) -> World:
    try:
        return load_world(name)
    except UnknownWorld as exc:
        raise click.BadParameter(str(exc), param_hint="WORLD") from None


def _templates(cache_dir: str | None, no_cache: bool) -> TemplateCache:
    return TemplateCache(None if no_cache else Path(cache_dir) if cache_dir else DEFAULT_CACHE)


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


cache_options = [
    click.option(
        "--cache-dir",
        envvar="MCPSIM_CACHE_DIR",
        metavar="DIR",
        help=f"Where built templates are kept [default: {DEFAULT_CACHE}; env MCPSIM_CACHE_DIR].",
    ),
    click.option("--no-cache", is_flag=True, help="Build templates in memory only; never read or write the disk."),
]
log_options = [
    click.option(
        "--log-level",
        default="INFO",
        show_default=True,
        help="Least severe log level shown (on stderr).",
        type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    ),
    click.option(
        "--log-format",
        default="console",
        show_default=True,
        type=click.Choice(["console", "json"]),
        help="Log lines for people or for machines.",
    ),
]


def _load_specs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    """Compile the spec files (or every spec in the folders) into this process's registry of
    worlds, before the command reads its WORLD argument."""
    if not value:
        return
    from mcpsim.factory import SpecError
    from mcpsim.factory.loading import register_folder, register_spec

    for source in value:
        try:
            register_folder(source) if param.name == "worlds_dirs" else register_spec(source)
        except SpecError as exc:
            raise click.BadParameter(str(exc), param_hint=f"'{param.opts[0]}'") from None


spec_options = [
    click.option(
        "--world-spec",
        "world_specs",
        multiple=True,
        metavar="FILE",
        type=click.Path(exists=True, dir_okay=False),
        is_eager=True,
        expose_value=False,
        callback=_load_specs,
        help="Also load the world a spec file (YAML or JSON, docs/world-spec.md) describes, with its tasks. "
        "Repeatable.",
    ),
    click.option(
        "--worlds-dir",
        "worlds_dirs",
        multiple=True,
        metavar="DIR",
        type=click.Path(exists=True, file_okay=False),
        is_eager=True,
        expose_value=False,
        callback=_load_specs,
        help="Also load every spec file (*.yaml, *.yml, *.json) directly in DIR. Repeatable.",
    ),
]


def _apply(options: list[Any]) -> Any:
    def decorate(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


def _world_at_scale(name: str, scale: str) -> World:
    w = _world(name)
    try:
        w.scale_params(scale)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scale") from None
    return w


def _lookup_message(exc: LookupError) -> str:
    """A lookup error's message as written (`str()` of a KeyError adds quotes around it)."""
    return str(exc.args[0]) if exc.args else str(exc)


def _tasks(world: str) -> Any:
    from mcpsim.tasks import TaskFileError, load_tasks

    _world(world)  # an unknown world: its name and the known ones
    try:
        return load_tasks(world)
    except TaskFileError as exc:
        raise click.ClickException(str(exc)) from None
    except LookupError as exc:
        raise click.BadParameter(_lookup_message(exc), param_hint="WORLD") from None


def _profile(spec: str | None) -> Any:
    from mcpsim.engine.faults import FaultProfileError, load_profile

    try:
        return load_profile(spec)
    except FaultProfileError as exc:
        raise click.BadParameter(str(exc), param_hint="--faults") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcpsim")
def main() -> None:
    """mcpsim: stateful simulated tool worlds behind real MCP servers.

    Serve a world to any MCP client (stdio or streamable HTTP), one isolated SQLite-backed
    episode per endpoint, with a JSON control plane for harnesses.
    """
