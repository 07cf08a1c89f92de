"""The `mcpsim` command group and what its commands share."""

from __future__ import annotations

import importlib
from typing import Any

import click

from mcpsim.cli._lookup import DEFAULT_CACHE

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

progress_option = click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress lines on stderr (loading a world, building a template) [default: when stderr is a terminal].",
)

runtime_options = [*cache_options, *log_options, progress_option]
"""The options of a command that loads a world and its templates, and tells how it goes."""


def _load_specs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    """Compile the spec files (or every spec in the folders) into this process's registry of
    worlds, before the command reads its WORLD argument: each in a sandbox process first, within
    the MCPSIM_COMPILE_* limits (docs/security.md), since a spec file is untrusted data."""
    if not value:
        return
    from mcpsim._sandbox import CompileLimits
    from mcpsim.catalogue import register_folder, register_spec
    from mcpsim.specs import SpecError

    hint = f"'{param.opts[0]}'"
    try:
        limits = CompileLimits.from_env()
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=hint) from None
    for source in value:
        try:
            if param.name == "worlds_dirs":
                register_folder(source, sandbox=limits)
            else:
                register_spec(source, sandbox=limits)
        except SpecError as exc:
            raise click.BadParameter(str(exc), param_hint=hint) from None


def sandbox_check(spec: str) -> None:
    """Compile and seed a spec file (a world or twin spec) in the sandbox first, within the
    MCPSIM_COMPILE_* limits (docs/security.md), as `--world-spec` does, for a command that then
    compiles it itself; a refusal is the command's error."""
    from mcpsim._sandbox import CompileLimits
    from mcpsim.catalogue import register_spec
    from mcpsim.specs import SpecError

    try:
        register_spec(spec, sandbox=CompileLimits.from_env())
    except (SpecError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _spec_option(flag: str, name: str, metavar: str, path: click.Path, help_text: str) -> Any:
    """An option loading spec worlds (see `_load_specs`) before the command reads WORLD."""
    kwargs: dict[str, Any] = {"multiple": True, "is_eager": True, "expose_value": False, "callback": _load_specs}
    return click.option(flag, name, metavar=metavar, type=path, help=help_text, **kwargs)


spec_options = [
    _spec_option(
        "--world-spec",
        "world_specs",
        "FILE",
        click.Path(exists=True, dir_okay=False),
        "Also load the world a spec file (YAML or JSON, docs/world-spec.md) describes, with its tasks, once it has "
        "compiled in a sandbox process (limits: MCPSIM_COMPILE_*, docs/security.md). Repeatable.",
    ),
    _spec_option(
        "--worlds-dir",
        "worlds_dirs",
        "DIR",
        click.Path(exists=True, file_okay=False),
        "Also load every spec file (*.yaml, *.yml, *.json) directly in DIR, each as --world-spec does. Repeatable.",
    ),
]


def _apply(options: list[Any]) -> Any:
    def decorate(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


COMMANDS = {
    "mcpsim.cli._info": ("worlds", "tools", "build"),
    "mcpsim.cli._grading": ("tasks", "check", "verify"),
    "mcpsim.cli._serving": ("serve",),
    "mcpsim.cli._serving_folder": ("serve-worlds",),
    "mcpsim.cli._running": ("run", "demo", "export"),
    "mcpsim.cli._generating": ("gen",),
    "mcpsim.cli._recording": ("record", "fidelity"),
    "mcpsim.cli._viewing": ("view",),
    "mcpsim.cli._authoring": ("new-world",),
    "mcpsim.cli._calibrate": ("calibrate",),
}
"""Which module adds which commands to `main`: a command's module is imported when the command
runs (or when --help lists them all), so `mcpsim serve` does not import the runner, the factory
or the viewer. tests/serve/test_startup.py checks this map against the commands the modules add."""


class _Commands(click.Group):
    """The `mcpsim` group, importing a command's module when the command is looked up (see
    COMMANDS); `commands` (every command, as click's attribute) imports them all."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._added: dict[str, click.Command] = {}
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        for module in COMMANDS:
            importlib.import_module(module)
        return self._added

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._added.update(value)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        self._added[name or cmd.name or ""] = cmd

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module, names in COMMANDS.items():
            if cmd_name in names and cmd_name not in self._added:
                importlib.import_module(module)
        return self._added.get(cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcpsim")
def main() -> None:
    """mcpsim: stateful simulated tool worlds behind real MCP servers.

    Serve a world to any MCP client (stdio or streamable HTTP), one isolated SQLite-backed
    episode per endpoint, with a JSON control plane for harnesses.
    """
