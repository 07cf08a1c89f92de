"""Looking at runs: `mcpsim view`."""

from __future__ import annotations

from pathlib import Path

import click

from mcpsim import logs
from mcpsim.cli._app import _apply, log_options, main
from mcpsim.cli._options import port_option


def _names(paths: list[Path]) -> list[str]:
    """A short name per run: its folder's name, or more of its path where two would look alike."""
    names = [p.name if p.is_dir() else p.stem for p in paths]
    for depth in range(2, 6):
        clashes = {n for n in names if names.count(n) > 1}
        if not clashes:
            break
        names = [
            "/".join((p if p.is_dir() else p.with_suffix("")).resolve().parts[-depth:]) if n in clashes else n
            for p, n in zip(paths, names, strict=True)
        ]
    return names


@main.command()
@click.argument("runs", nargs=-1, required=True, metavar="RUN [RUN ...]", type=click.Path(exists=True, path_type=Path))
@port_option(default=0, show_default=False, help_text="The port on 127.0.0.1 [default: a free one].")
@click.option("--no-open", is_flag=True, help="Print the viewer's URL; do not open a browser.")
@_apply(log_options)
def view(runs: tuple[Path, ...], port: int, no_open: bool, log_level: str, log_format: str) -> None:
    """Browse runs in a web browser: scores, a filterable episode table, each episode's
    conversation with every tool call's row-level changes and verdict, and comparisons.

    \b
    RUN: a run directory (`mcpsim run --out`, `mcpsim demo` writes runs/demo/oracle and
    runs/demo/noop) or a trajectories .jsonl file (`mcpsim serve --record`). Give two or more
    to compare them. Serves on 127.0.0.1 only, until Ctrl-C; a run still being written is
    read on as it grows. See docs/viewer.md.
    """
    import socket
    import threading
    import webbrowser

    import uvicorn
    from starlette.middleware import Middleware

    from mcpsim.serve import HostOriginGuard
    from mcpsim.view import RunError, RunFile, run_viewer

    logs.configure("WARNING" if log_level.upper() == "INFO" else log_level, log_format)
    try:
        files = RunFile.open_all(runs, _names(list(runs)))
    except RunError as exc:
        raise click.ClickException(str(exc)) from None
    # Host and Origin checked like the server's (DNS rebinding): a page elsewhere cannot read the runs.
    app = run_viewer(files, middleware=[Middleware(HostOriginGuard)])
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
    episodes = sum(len(f.rows()) for f in files)
    click.echo(f"mcpsim view: {len(files)} run{'s' if len(files) > 1 else ''}, {episodes} episodes at {url}")
    click.echo("Ctrl-C stops it.")
    if not no_open:

        def open_when_ready() -> None:
            for _ in range(200):  # about 10 s at most
                if server.started:
                    webbrowser.open(url)
                    return
                threading.Event().wait(0.05)

        threading.Thread(target=open_when_ready, daemon=True).start()
    server.run(sockets=[sock])
