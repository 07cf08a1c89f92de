"""`mcpsim record` (a recording proxy in front of a real stdio MCP server) and `mcpsim fidelity`
(a twin's answers compared with a recording's)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from mcpsim.cli._app import main


@main.command("record", context_settings={"ignore_unknown_options": True})
@click.option(
    "--out", "out", required=True, type=click.Path(file_okay=False), help="Directory for calls.jsonl and meta.json."
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def record_command(out: str, command: tuple[str, ...]) -> None:
    """Run a real stdio MCP server as `COMMAND` (after --), pass its traffic through between the
    client on this process's stdin/stdout and the server, and record every request and response
    with timing and errors to OUT/calls.jsonl. Exits with the server's exit code.

    Example (as the command a client launches): mcpsim record --out rec -- npx @modelcontextprotocol/server-memory
    """
    from mcpsim.factory.record import record

    try:
        code = record(list(command), Path(out))
    except OSError as exc:
        raise click.ClickException(f"cannot start {command[0]!r}: {exc}") from None
    sys.exit(code)


@main.command("fidelity")
@click.argument("twin", type=click.Path(exists=True, dir_okay=False))
@click.argument("recordings", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the twin's data.")
def fidelity_command(twin: str, recordings: tuple[str, ...], seed: int) -> None:
    """Replay each recording's tool calls against a fresh episode of the TWIN spec and print, per
    recording, the share of calls with the same success or error, the same result shape and the
    same values as the real server's recorded answers."""
    import anyio

    from mcpsim.factory.record import fidelity, load_recording
    from mcpsim.factory.twin import load_twin
    from mcpsim.logs import configure

    configure("WARNING")  # stdout is the report
    spec = load_twin(twin)
    reports = {}
    for path in recordings:
        report = anyio.run(fidelity, spec, load_recording(path), seed)
        reports[path] = report.to_json()
    click.echo(json.dumps(reports, indent=2, default=str))
