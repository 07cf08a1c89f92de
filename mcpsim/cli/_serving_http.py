"""`mcpsim serve --http` once its world is loaded (`serve` in mcpsim.cli._serving): the HTTP options
checked, the port bound, the app built and served by uvicorn until the server is stopped. Imported
only over HTTP: stdio's start-up never loads this module."""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import click
import uvicorn

from mcpsim.cli._lookup import find_tasks
from mcpsim.engine import snapshot_key
from mcpsim.serve import ClientLimits, ServeConfig, create_app, public_base_url

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from mcpsim import logs
    from mcpsim.engine import TemplateCache
    from mcpsim.world import World


@dataclass(frozen=True)
class _HttpOptions:
    """The options of `serve --http` read past loading its world, by their parameter names."""

    host: str
    port: int
    token: str | None
    no_auth: bool
    public_url: str | None
    allowed_hosts: tuple[str, ...]
    ttl: float
    no_cache: bool
    faults_spec: str | None
    snapshot_key_text: str | None

    @classmethod
    def of(cls, params: dict[str, Any]) -> _HttpOptions:
        return cls(**{f.name: params[f.name] for f in fields(cls)})


def serve_http(
    w: World,
    templates: TemplateCache,
    episode_budget: int | None,
    steps: logs.Progress,
    params: dict[str, Any],
    limits: dict[str, Any],
) -> None:
    """Serve `w` (and every other world) over HTTP. `params`: the command's options, by parameter
    name; `limits`: the ClientLimits fields as the options give them."""
    options = _HttpOptions.of(params)
    host = options.host
    public_url = _checked(options)
    sock = _listen(host, options.port)
    port = sock.getsockname()[1]  # the one picked for --port 0
    # said whether or not stderr is a terminal (--no-progress silences it): a first build takes a while
    announce = params.get("progress") is not False
    if announce:
        _say(
            f"building {w.name} ({params['scale']} scale, seed {params['seed']}) and its default episode; "
            "a template not in the cache is built now, which can take a minute"
        )
    steps.step("starting the HTTP server (a template not cached is built when its first episode is created)")
    app = _app(w, templates, episode_budget, options, public_url, params, limits, sock)
    from mcpsim.runner import ServerJobs  # the runner's episode loop, for POST /jobs

    app.state.control.jobs = ServerJobs()  # the built-in agents (no model endpoint: `openai:MODEL` is refused)
    from mcpsim.catalogue import loaded_worlds

    for name in loaded_worlds():  # generate the tasks of spec worlds now, not in the first request
        find_tasks(name)
    shown = public_url or f"http://{f'[{host}]' if ':' in host else host}:{port}"
    served = list(getattr(app.state, "worlds", [w.name]))
    _say(f"serving {w.name} on {shown}/mcp (control plane: {shown}/episodes); worlds served: {', '.join(served)}")
    _say(f"watch live episodes at {shown}/ui/" + ("" if options.no_auth else " (it asks for the control-plane token)"))
    config = uvicorn.Config(
        app, host=host, port=port, log_config=None, access_log=False, lifespan="on", http=app.state.http_protocol
    )
    _Server(config, f"ready: {shown}/health answers" if announce else None).run(sockets=[sock])


def _say(text: str) -> None:
    print(f"mcpsim: {text}", file=sys.stderr, flush=True)


class _Server(uvicorn.Server):
    """uvicorn's server, saying `ready` on stderr once its start-up is done and it accepts requests."""

    def __init__(self, config: uvicorn.Config, ready: str | None) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit and self.ready:
            _say(self.ready)


def _checked(options: _HttpOptions) -> str | None:
    """The public URL (normalized; None for --port 0, whose URLs come from the listening socket),
    once the options are checked that can be before anything listens: the snapshot key, the
    token against --no-auth, the URL itself, and a wildcard bind without --allowed-host."""
    if options.snapshot_key_text is not None:
        try:
            snapshot_key(options.snapshot_key_text)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--snapshot-key") from None
    if options.token is not None and options.no_auth:
        raise click.UsageError(
            "--token and --no-auth exclude each other: a token closes the control plane, --no-auth opens it"
        )
    host, port, public_url = options.host, options.port, options.public_url
    try:
        public_url = public_base_url(host, port, public_url)  # None for --port 0: from the listening socket
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--public-url") from None
    if host in ("0.0.0.0", "::") and not options.allowed_hosts:
        print(
            f"mcpsim: bound to {host}: only the loopback names and {public_url or 'the public URL'} are accepted "
            "as Host; list the "
            "names clients use with --allowed-host (and --public-url)",
            file=sys.stderr,
            flush=True,
        )
    return public_url


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound first: a port in use fails at once, before the app is built or
    "serving" printed."""
    try:
        return socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {host}:{port}: {os.strerror(exc.errno) if exc.errno else exc}"
        ) from None


def _app(
    w: World,
    templates: TemplateCache,
    episode_budget: int | None,
    options: _HttpOptions,
    public_url: str | None,
    params: dict[str, Any],
    limits: dict[str, Any],
    sock: socket.socket,
) -> Starlette:
    """The app of the options' ServeConfig; `sock` is closed if it cannot be built."""
    named: dict[str, Any] = {  # the options named after their setting (a list where the option gives a tuple)
        f.name: list(value) if isinstance(value := params[f.name], tuple) else value
        for f in fields(ServeConfig)
        if f.name in params
    }
    try:
        return create_app(
            ServeConfig(
                **named
                | {
                    "world": w.name,
                    "public_url": public_url,
                    "max_episode_bytes": episode_budget,
                    "template_cache_bytes": templates.max_bytes,
                    "ttl_seconds": options.ttl or None,
                    "cache_dir": None if options.no_cache else str(templates.cache_dir),
                    "faults": options.faults_spec,
                    "snapshot_key": options.snapshot_key_text,
                    "client_limits": ClientLimits(**limits),
                }
            )
        )
    except ValueError as exc:  # a token, host or origin the access checks refuse
        sock.close()
        raise click.UsageError(str(exc)) from None
    except BaseException:
        sock.close()
        raise
