"""Serving worlds: MCP for agents (stdio, in memory, streamable HTTP) and the JSON control plane
for harnesses, many episodes and many worlds in one server, and the stdio start-up that answers
`initialize` from a world card before the world is loaded.

This package is on the stdio start-up path (`mcpsim serve WORLD` answers `initialize` before it
imports the MCP SDK's server, Starlette or the world), so its names are imported on first use
(PEP 562): the one lazy package `__init__` besides `mcpsim` itself and the CLI's dispatch.
`tests/project/test_structure.py` holds that path to its import budget."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpsim.serve._access import HostOriginGuard, public_base_url
    from mcpsim.serve._app import create_app, serve_in_thread
    from mcpsim.serve._host import EpisodeManager
    from mcpsim.serve._mcp import META_EPISODE, SDK_ERROR_PREFIX, build_server, serve_stdio
    from mcpsim.serve._settings import ClientLimits, ServeConfig
    from mcpsim.serve._startup import DeferredServer, WorldCards
    from mcpsim.serve._stdio import EpisodeFileError, FileEpisode
    from mcpsim.serve._work import off_the_loop
    from mcpsim.serve._worlds import WorldHost

_HOMES = {
    "HostOriginGuard": "_access",
    "public_base_url": "_access",
    "create_app": "_app",
    "serve_in_thread": "_app",
    "EpisodeManager": "_host",
    "META_EPISODE": "_mcp",
    "SDK_ERROR_PREFIX": "_mcp",
    "build_server": "_mcp",
    "serve_stdio": "_mcp",
    "ClientLimits": "_settings",
    "ServeConfig": "_settings",
    "DeferredServer": "_startup",
    "WorldCards": "_startup",
    "EpisodeFileError": "_stdio",
    "FileEpisode": "_stdio",
    "off_the_loop": "_work",
    "WorldHost": "_worlds",
}

__all__ = [
    "build_server",
    "ClientLimits",
    "create_app",
    "DeferredServer",
    "EpisodeFileError",
    "EpisodeManager",
    "FileEpisode",
    "HostOriginGuard",
    "META_EPISODE",
    "off_the_loop",
    "public_base_url",
    "SDK_ERROR_PREFIX",
    "serve_in_thread",
    "serve_stdio",
    "ServeConfig",
    "WorldCards",
    "WorldHost",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
