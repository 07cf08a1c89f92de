"""The world factory: `mcpsim gen --validate SPEC` (the validation report) and `mcpsim gen --serve
SPEC` (the spec's world over stdio)."""

from __future__ import annotations

import json
import sys

import click

from mcpsim.cli._app import main


@main.command("gen")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
@click.option("--validate", "mode", flag_value="validate", default=True, help="Validate the spec's world (default).")
@click.option("--serve", "mode", flag_value="serve", help="Serve the spec's world over stdio.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the world's data.")
@click.option("--scale", default="small", show_default=True, help="One of the spec's scales.")
def gen(spec: str, mode: str, seed: int, scale: str) -> None:
    """Compile a world spec (YAML or JSON) and validate or serve it. Exits 1 when validation rejects it."""
    from mcpsim.factory.__main__ import main as factory

    if mode == "serve":
        sys.exit(factory(["serve", spec, "--seed", str(seed), "--scale", scale]))
    from mcpsim.factory import SpecError, compile_spec, load_spec, validate

    try:
        compiled = compile_spec(load_spec(spec))
    except SpecError as exc:
        raise click.ClickException(str(exc)) from None
    report = validate(compiled, seed=seed, scale=scale)
    click.echo(json.dumps(report.to_json(), indent=2))
    if not report.ok:
        click.echo(f"rejected by: {', '.join(report.failed_checks())}", err=True)
        sys.exit(1)
