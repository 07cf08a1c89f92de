"""Test support for world authors and mcpsim's own tests: `WorldDriver` drives an episode of a
world, `mcp_client` and `stdio_server` talk to it over real MCP, and, as a pytest plugin
(`pytest_plugins = ["mcpsim.testing"]`), the `world_driver` and `mcpsim_templates` fixtures and
`world_fixtures` make each a line in a test."""

from mcpsim.testing._driver import WorldDriver, clean_env, mcp_client, stdio_server, world_fixtures

try:  # the fixtures exist only where pytest is installed (a test extra)
    from mcpsim.testing._driver import mcpsim_templates, world_driver
except ImportError:  # pragma: no cover
    pass

__all__ = [
    "WorldDriver",
    "clean_env",
    "mcp_client",
    "mcpsim_templates",
    "stdio_server",
    "world_driver",
    "world_fixtures",
]
