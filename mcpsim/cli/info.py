"""Looking at worlds: `mcpsim worlds`, `mcpsim tools`, `mcpsim build`."""

from __future__ import annotations

import sys
import time

import click
from rich.console import Console
from rich.table import Table

from mcpsim import logs
from mcpsim.cli._app import (
    _apply,
    _first_sentence,
    _print_json,
    _templates,
    _world,
    _world_at_scale,
    cache_options,
    log_options,
    main,
    spec_options,
)
from mcpsim.world.registry import load_world, world_names


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_apply(spec_options)
def worlds(as_json: bool) -> None:
    """List the installed worlds. A world that fails to load is listed with its error (exit 1)."""
    rows, broken = [], {}
    for name in world_names():
        try:
            rows.append(load_world(name))
        except Exception as exc:  # one broken plug-in must not hide the others
            broken[name] = f"{type(exc).__name__}: {exc}"
    if as_json:
        _print_json(
            [
                {
                    "name": w.name,
                    "title": w.title,
                    "description": w.description,
                    "version": w.version,
                    "tools": len(w.tools),
                    "tables": sorted(w.metadata.tables),
                    "scales": w.scales,
                }
                for w in rows
            ]
            + [{"name": n, "error": e} for n, e in broken.items()]
        )
    else:
        table = Table("world", "title", "tools", "tables", "scales", "version")
        for w in rows:
            table.add_row(
                w.name, w.title, str(len(w.tools)), str(len(w.metadata.tables)), ", ".join(w.scales), w.version
            )
        for name, error in broken.items():
            table.add_row(name, f"[red]failed to load: {error}[/red]", "", "", "", "")
        Console().print(table)
    if broken:
        sys.exit(1)


@main.command()
@click.argument("world")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, with full input schemas.")
@_apply(spec_options)
def tools(world: str, as_json: bool) -> None:
    """List a world's tools: what they do, whether they write, their arguments."""
    w = _world(world)
    specs = [w.tools[n] for n in sorted(w.tools)]
    if as_json:
        _print_json([s.describe() for s in specs])
        return
    table = Table("tool", "kind", "arguments", "description", show_lines=True)
    for s in specs:
        kind = "read" if s.read_only else "write, destructive" if s.destructive else "write"
        args = ", ".join(p.name + ("" if p.default is p.empty else "?") for p in s.parameters)
        table.add_row(s.name, kind, args, _first_sentence(s.description))
    Console().print(table)


@main.command()
@click.argument("world")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the generated data.")
@click.option("--scale", default="default", show_default=True, help="Size of the world (see `mcpsim worlds`).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_apply(cache_options + log_options)
def build(
    world: str,
    seed: int,
    scale: str,
    as_json: bool,
    cache_dir: str | None,
    no_cache: bool,
    log_level: str,
    log_format: str,
) -> None:
    """Build (or load from the cache) a world's template and print its state hash and row counts."""
    from mcpsim.engine.episode import Episode

    logs.configure(log_level, log_format)
    w = _world_at_scale(world, scale)
    started = time.perf_counter()
    episode = Episode.create(w, seed, scale, templates=_templates(cache_dir, no_cache))
    seconds = time.perf_counter() - started
    counts = {
        t: r[0]["n"] for t in sorted(w.metadata.tables) if (r := episode.query(f'SELECT count(*) AS n FROM "{t}"'))
    }
    info = {
        "world": w.name,
        "version": w.version,
        "seed": seed,
        "scale": scale,
        "state_hash": episode.state_hash(),
        "rows": counts,
        "bytes": len(episode.snapshot()),
        "seconds": round(seconds, 3),
    }
    if as_json:
        _print_json(info)
    else:
        click.echo(f"{w.name} {scale} seed {seed}: {sum(counts.values())} rows, state hash {info['state_hash']}")
        for t, n in counts.items():
            click.echo(f"  {t:<24}{n:>8}")
