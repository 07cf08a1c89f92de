"""`RayEndpoint`: what `serve_on_ray` yields (the router's URL, the token, the server hosts
and which holds each episode), shared with the router that keeps it up to date
(`mcpsim.runner._ray_router`)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RayEndpoint"]


@dataclass
class RayEndpoint:
    """Where trainers reach a server on Ray: `url` (the router) and the control-plane `token`;
    `hosts` the servers' own URLs, `nodes` their Ray node ids, `owners` episode id -> host, `dead`
    the hosts the router could not reach (it sends them nothing more)."""

    url: str
    token: str | None
    hosts: list[str]
    nodes: list[str]
    owners: dict[str, int]
    dead: set[int] = field(default_factory=set)
