"""`mcpsim record` (a recording proxy in front of a real stdio or streamable HTTP MCP server) and `mcpsim fidelity`
(a twin's answers compared with a recording's)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from mcpsim.cli._app import main, sandbox_check
from mcpsim.cli._options import port_option


@main.command("record", context_settings={"ignore_unknown_options": True})
@click.option(
    "--out", "out", required=True, type=click.Path(file_okay=False), help="Directory for calls.jsonl and meta.json."
)
@port_option(default=0, help_text="With a URL: the port to listen on, on 127.0.0.1 (0: a free one).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="URL | -- COMMAND [ARGS]...")
def record_command(out: str, port: int, command: tuple[str, ...]) -> None:
    """Record a real MCP server's traffic, passed through untouched, to OUT/calls.jsonl: every
    request and response with timing and errors.

    stdio: run the server as `COMMAND` (after --) and stand between it and the client on this
    process's stdin/stdout; exits with the server's exit code.

    streamable HTTP: give the server's URL instead; the proxy listens on 127.0.0.1:PORT, prints
    the URL to give the client (the same path) on stdout, and records until Ctrl-C or SIGTERM.

    Examples: mcpsim record --out rec -- npx @modelcontextprotocol/server-memory;
    mcpsim record --out rec --port 9000 http://127.0.0.1:8000/mcp
    """
    if len(command) == 1 and re.match(r"^https?://", command[0]):
        _record_http(command[0], Path(out), port)
        return
    from mcpsim.twins.recordings import record

    try:
        code = record(list(command), Path(out))
    except OSError as exc:
        raise click.ClickException(f"cannot start {command[0]!r}: {exc}") from None
    sys.exit(code)


def _record_http(url: str, out: Path, port: int) -> None:
    from mcpsim.logs import configure
    from mcpsim.twins.recordings import record_http

    configure("WARNING")  # stdout is the URL

    def ready(listening: str) -> None:
        click.echo(listening)
        click.echo(f"recording {url} to {out / 'calls.jsonl'}: point the client at {listening}; Ctrl-C stops", err=True)

    try:
        record_http(url, out, port=port, ready=ready)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc}") from None


@main.command("fidelity")
@click.argument("twin", type=click.Path(exists=True, dir_okay=False))
@click.argument("recordings", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the twin's data.")
def fidelity_command(twin: str, recordings: tuple[str, ...], seed: int) -> None:
    """Replay each recording's tool calls against a fresh episode of the TWIN spec and print, per
    recording, the share of calls with the same success or error, the same result shape and the
    same values as the real server's recorded answers."""
    import anyio

    from mcpsim.logs import configure
    from mcpsim.twins import load_twin
    from mcpsim.twins.recordings import fidelity, load_recording

    configure("WARNING")  # stdout is the report
    try:
        spec = load_twin(twin)
    except ValueError as exc:  # past its bound, or not a twin spec
        raise click.ClickException(str(exc)) from None
    sandbox_check(twin)  # an untrusted file: compiled and seeded within limits before it is here
    reports = {}
    for path in recordings:
        try:
            recording = load_recording(path)
        except ValueError as exc:  # a recording past a bound or not what `mcpsim record` writes
            raise click.ClickException(str(exc)) from None
        report = anyio.run(fidelity, spec, recording, seed)
        reports[path] = report.to_json()
    click.echo(json.dumps(reports, indent=2, default=str))
