"""`mcpsim run --server URL`: the world the server serves, checked against this client's copy
before any episode starts (the client takes tasks, gold actions and the simulated user from its
copy; the server grades with its own)."""

from __future__ import annotations

from typing import Any

import click

WORLDS_TIMEOUT = 60.0  # seconds for GET /worlds; a busy server may be building a template


def check_served_world(world: str, server_url: str, token: str | None) -> None:
    """A usage error unless the server at `server_url` serves `world` at this client's version.
    An unreachable server is left to the run, which reports it per episode (`server_error`)."""
    import httpx

    from mcpsim.world import UnknownWorld, load_world

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.get(f"{server_url.rstrip('/')}/worlds", headers=headers, timeout=WORLDS_TIMEOUT)
    except httpx.HTTPError:
        return
    if response.status_code in (401, 403):
        raise click.UsageError(f"the server at {server_url} refused the control-plane token (--token, MCPSIM_TOKEN)")
    if response.status_code != 200:
        return  # not an mcpsim server's answer: the run says what goes wrong
    served = _versions(response.json())
    try:
        mine = load_world(world).version
    except UnknownWorld:
        mine = None
    if world not in served:
        known = ", ".join(sorted(served)) or "none"
        raise click.BadParameter(
            f"the server at {server_url} does not serve {world!r} (it serves: {known})", param_hint="WORLD"
        )
    if mine is None:
        raise click.BadParameter(
            f"the server at {server_url} serves {world!r} (version {served[world][:12]}), but this client has no "
            "copy of it: the run takes its tasks, gold actions and simulated user from the client, so load the "
            "same spec here with --world-spec FILE or --worlds-dir DIR",
            param_hint="WORLD",
        )
    if mine != served[world]:
        raise click.UsageError(
            f"world {world!r} differs: the server at {server_url} serves version {served[world][:12]}, this "
            f"client has version {mine[:12]}; its tasks and grading would not match (update one side, or "
            "load the server's spec here with --world-spec / --worlds-dir)"
        )


def _versions(listed: Any) -> dict[str, str]:
    """World name -> version, from GET /worlds."""
    if not isinstance(listed, list):
        return {}
    return {w["name"]: str(w.get("version", "")) for w in listed if isinstance(w, dict) and "name" in w}
