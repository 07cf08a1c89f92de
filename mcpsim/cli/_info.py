"""Looking at worlds: `mcpsim worlds`, `mcpsim tools`, `mcpsim build`."""

from __future__ import annotations

import sys
import time

import click

from mcpsim import logs
from mcpsim.cli._app import _apply, main, runtime_options, spec_options
from mcpsim.cli._lookup import find_world, open_templates, world_at_scale
from mcpsim.cli._output import first_sentence, print_json, print_table
from mcpsim.world import load_world, world_names


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_apply(spec_options)
def worlds(as_json: bool) -> None:
    """List the installed worlds. A world that fails to load is listed with its error (exit 1)."""
    loaded, broken = [], {}
    for name in world_names():
        try:
            loaded.append(load_world(name))
        except Exception as exc:  # one broken plug-in must not hide the others
            broken[name] = f"{type(exc).__name__}: {exc}"
    if as_json:
        print_json(
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
                for w in loaded
            ]
            + [{"name": n, "error": e} for n, e in broken.items()]
        )
    else:
        rows = [
            [w.name, str(len(w.tools)), str(len(w.metadata.tables)), ", ".join(w.scales), w.version[:12], w.title]
            for w in loaded
        ]
        rows += [[name, "", "", "", "", f"failed to load: {error}"] for name, error in broken.items()]
        print_table(["world", "tools", "tables", "scales", "version", "title"], rows, numbers=("tools", "tables"))
    if broken:
        sys.exit(1)


@main.command()
@click.argument("world")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output, with full input schemas.")
@_apply(spec_options)
def tools(world: str, as_json: bool) -> None:
    """List a world's tools: what they do, whether they write, their arguments."""
    w = find_world(world)
    specs = [w.tools[n] for n in sorted(w.tools)]
    if as_json:
        print_json([s.describe() for s in specs])
        return
    rows = []
    for s in specs:
        kind = "read" if s.read_only else "write, destructive" if s.destructive else "write"
        args = ", ".join(p.name + ("" if p.default is p.empty else "?") for p in s.parameters)
        rows.append([s.name, kind, args, first_sentence(s.description)])
    print_table(["tool", "kind", "arguments", "description"], rows)


@main.command()
@click.argument("world")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the generated data.")
@click.option("--scale", default="default", show_default=True, help="Size of the world (see `mcpsim worlds`).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_apply(runtime_options)
def build(
    world: str,
    seed: int,
    scale: str,
    as_json: bool,
    progress: bool | None,
    cache_dir: str | None,
    no_cache: bool,
    log_level: str,
    log_format: str,
) -> None:
    """Build (or load from the cache) a world's template and print its state hash and row counts."""
    from mcpsim.engine import Episode

    logs.configure(log_level, log_format)
    w = world_at_scale(world, scale)
    templates = open_templates(cache_dir, no_cache)
    steps = logs.Progress(progress)
    steps.step(f"{w.name} {scale} seed {seed}: loading the template, or building it if it is not cached")
    started = time.perf_counter()
    episode = Episode.create(w, seed, scale, templates=templates)
    seconds = time.perf_counter() - started
    steps.step(f"template {'built' if templates.builds else 'loaded from the cache'} in {seconds:.1f} s")
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
        print_json(info)
    else:
        click.echo(f"{w.name} {scale} seed {seed}: {sum(counts.values())} rows")
        click.echo(f"state hash {info['state_hash']}")
        for t, n in counts.items():
            click.echo(f"  {t:<24}{n:>8}")
