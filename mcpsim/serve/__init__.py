"""The two planes a server exposes: `mcp` (the data plane: a World as an MCP server, the only
module importing the SDK's server side), `control` (the control plane's routes), `app` (both in
one Starlette app, ServeConfig), `access` (tokens, Host/Origin, public URL, verdict detail) and
`host` (many episodes: ids, caps, expiry)."""

from mcpsim.serve._access import HostOriginGuard, default_public_url, normalize_public_url
from mcpsim.serve._app import create_app, serve_in_thread
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._mcp import META_EPISODE, SDK_ERROR_PREFIX, MCPServer, build_server, serve_stdio
from mcpsim.serve._settings import DEFAULTS, ClientLimits, ServeConfig, default_of, env_var
from mcpsim.serve._startup import DeferredServer, card_of, read_card, usage_problem, write_card
from mcpsim.serve._stdio import EpisodeFileError, FileEpisode
from mcpsim.serve._work import off_the_loop
from mcpsim.serve._worlds import WorldHost

__all__ = [
    "ClientLimits",
    "DEFAULTS",
    "DeferredServer",
    "EpisodeFileError",
    "EpisodeManager",
    "FileEpisode",
    "HostOriginGuard",
    "MCPServer",
    "META_EPISODE",
    "SDK_ERROR_PREFIX",
    "ServeConfig",
    "WorldHost",
    "build_server",
    "card_of",
    "create_app",
    "default_of",
    "default_public_url",
    "env_var",
    "normalize_public_url",
    "off_the_loop",
    "read_card",
    "serve_in_thread",
    "serve_stdio",
    "usage_problem",
    "write_card",
]
