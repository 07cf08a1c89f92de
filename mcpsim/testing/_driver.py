"""Test support for world authors (and mcpsim's own tests): drive an episode of a world, talk to
it through a real MCP client, and the pytest fixtures that make both one line in a test.

    # conftest.py
    pytest_plugins = ["mcpsim.testing._driver"]

    def test_a_refund_needs_a_delivered_order(world_driver):
        shop = world_driver(my_world)                      # seed 0, small scale, closed after the test
        shop.fails("refund_order", "not delivered", order_id="o_1")
        assert shop.ok("get_order", order_id="o_1").status == "pending"

    async def test_over_mcp(world_driver):
        shop = world_driver(my_world)
        async with shop.mcp() as client:                   # the SDK's Client, in memory
            tools = await client.list_tools()

A driver refuses to let a simulator bug pass silently: the fixture fails the test if the episode
was flagged. Failures raise AssertionError (not `assert`), so they hold under `python -O` too
and pytest need not rewrite this module (PYTEST_DONT_REWRITE: importing it before pytest loads
it as a plugin is fine).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Literal, TypeVar

import anyio
from mcp import Client, StdioServerParameters

from mcpsim.engine import CallResult, Episode, FaultProfile, TemplateCache
from mcpsim.serve import build_server
from mcpsim.world import World, load_world

__all__ = [
    "WorldDriver",
    "mcp_client",
    "stdio_server",
    "clean_env",
    "world_driver",
    "mcpsim_templates",
    "world_fixtures",
]

D = TypeVar("D", bound="WorldDriver")


class WorldDriver:
    """An episode of a world plus what tests keep needing: calls that must succeed or fail for a
    stated reason, SQL reads of the state, and arranging a state the seed does not contain."""

    def __init__(
        self,
        world: World | str,
        seed: int = 0,
        scale: str = "small",
        *,
        templates: TemplateCache | None = None,
        faults: FaultProfile | None = None,
        episode: Episode | None = None,
    ) -> None:
        self.world = load_world(world) if isinstance(world, str) else world
        if episode is None:
            episode = Episode.create_with_faults(self.world, seed, scale, faults, templates=templates)
        elif episode.world is not self.world:
            raise ValueError(f"the episode belongs to world {episode.world.name}, not {self.world.name}")
        self.ep = episode

    @property
    def episode(self) -> Episode:
        return self.ep

    # -- calling ---------------------------------------------------------------------------------------

    def call(self, tool: str, **arguments: Any) -> CallResult:
        return self.ep.call(tool, arguments)

    def ok(self, tool: str, **arguments: Any) -> Any:
        """The call's value; AssertionError with the tool's error if it failed."""
        result = self.ep.call(tool, arguments)
        if result.is_error:
            raise AssertionError(f"{tool} failed: {result.error}")
        return result.value

    def fails(self, tool: str, message: str, **arguments: Any) -> CallResult:
        """The call fails with `message` in its error, as a business error (not a simulator bug),
        and changes nothing."""
        before = self.ep.state_hash()
        result = self.ep.call(tool, arguments)
        if not result.is_error:
            raise AssertionError(f"{tool} succeeded but should fail with {message!r}")
        if result.bug:
            raise AssertionError(f"{tool} hit a simulator bug instead of a business error: {self.ep.flags[-1:]}")
        if message not in (error := result.error or ""):
            raise AssertionError(f"{tool} failed, but without {message!r}: {error}")
        self._unchanged(tool, before, result)
        return result

    def invalid(self, tool: str, **arguments: Any) -> str:
        """The arguments break the tool's input schema: refused before the tool runs, nothing
        changes. Returns the error."""
        before = self.ep.state_hash()
        result = self.ep.call(tool, arguments)
        error = result.error or ""
        if not error.startswith(f"Invalid arguments for {tool}"):
            raise AssertionError(f"{tool} should refuse the arguments as invalid; got {error or result.value!r}")
        self._unchanged(tool, before, result)
        return error

    def _unchanged(self, tool: str, before: str, result: CallResult) -> None:
        if result.changes:
            raise AssertionError(f"the refused {tool} call changed rows: {result.changes}")
        if self.ep.state_hash() != before:
            raise AssertionError(f"the refused {tool} call changed the state hash")

    # -- reading and arranging -------------------------------------------------------------------------

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        return self.ep.query(sql, params)

    def row(self, sql: str, *params: Any) -> dict[str, Any]:
        """The first row; AssertionError naming the query if the seeded data has none."""
        rows = self.rows(sql, *params)
        if not rows:
            raise AssertionError(f"the seeded data has no row for: {sql} {params}")
        return rows[0]

    def value(self, sql: str, *params: Any) -> Any:
        return next(iter(self.row(sql, *params).values()))

    def select(self, table: str, **where: Any) -> list[dict[str, Any]]:
        """Rows of `table` matching a where-DSL condition per column (see mcpsim.engine._query)."""
        return self.ep.select(table, where)

    def arrange(self, sql: str, *params: Any) -> None:
        """Set up a state the seed may not contain, outside any tool call (not in the change log)."""
        self.ep.conn.execute(sql, params)

    def state_hash(self) -> str:
        return self.ep.state_hash()

    # -- lifecycle -------------------------------------------------------------------------------------

    def assert_no_bug(self) -> None:
        """AssertionError if any call hit a simulator bug (an unexpected exception in a tool)."""
        if self.ep.flagged:
            raise AssertionError(f"the {self.world.name} episode hit a simulator bug: {self.ep.flags}")

    def mcp(
        self, *, mode: Literal["auto", "legacy"] = "legacy", time_limit: float = 30.0
    ) -> AbstractAsyncContextManager[Client]:
        """A real MCP client (the SDK's, in memory) connected to this driver's episode."""
        return mcp_client(self.world, self.ep, mode=mode, time_limit=time_limit)

    def close(self) -> None:
        self.ep.close()

    def __enter__(self: D) -> D:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@asynccontextmanager
async def mcp_client(
    world: World, episode: Episode, *, mode: Literal["auto", "legacy"] = "legacy", time_limit: float = 30.0
) -> AsyncIterator[Client]:
    """The MCP SDK's `Client` over `mcpsim.serve._mcp.build_server`, in memory, serving `episode`:
    the protocol path an agent takes, without a process or a socket. `legacy` mode keeps a
    session, so `client.instructions` holds the policy. Everything inside must finish within
    `time_limit` seconds."""
    server = build_server(world, lambda _id: episode)
    with anyio.fail_after(time_limit):
        async with Client(server, mode=mode) as client:
            yield client


def clean_env() -> dict[str, str]:
    """The environment without MCPSIM_* settings, so a child server runs on its defaults."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MCPSIM_")}


def stdio_server(
    world: str, seed: int = 0, scale: str = "small", *, extra_args: tuple[str, ...] = (), cwd: str | None = None
) -> StdioServerParameters:
    """Parameters for `Client(...)` that launch `mcpsim serve <world>` over stdio in a child
    process (this interpreter, no template cache on disk, MCPSIM_* settings cleared)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpsim", "serve", world, "--seed", str(seed), "--scale", scale, "--no-cache", *extra_args],
        env=clean_env() | {"PYTHONUNBUFFERED": "1"},
        cwd=cwd,
    )


# -- pytest fixtures (pytest is a test extra: only defined when it is installed) ------------------------------

try:
    import pytest
except ImportError:  # pragma: no cover - without pytest the helpers above still work
    pass
else:

    @pytest.fixture(scope="session")
    def mcpsim_templates() -> TemplateCache:
        """One in-memory template cache per test session: each (world, seed, scale) is built once."""
        return TemplateCache()

    @pytest.fixture
    def world_driver(mcpsim_templates: TemplateCache) -> Iterator[Callable[..., Any]]:
        """Makes drivers: `world_driver(world, seed=0, scale="small", driver=WorldDriver, faults=None)`.
        At the end of the test each driver's episode must be free of simulator bugs; all are closed."""
        made: list[WorldDriver] = []

        def make(
            world: World | str,
            seed: int = 0,
            scale: str = "small",
            *,
            driver: type[WorldDriver] = WorldDriver,
            faults: FaultProfile | None = None,
        ) -> WorldDriver:
            made.append(driver(world, seed, scale, templates=mcpsim_templates, faults=faults))
            return made[-1]

        yield make
        try:
            for d in made:
                d.assert_no_bug()
        finally:
            for d in made:
                d.close()

    def world_fixtures(world: World, driver: type[WorldDriver], *, names: tuple[str, str]) -> tuple[Any, Any, Any]:
        """The fixtures a world's test folder shares, for its conftest.py:

            retail, shop, episode = world_fixtures(retail_world, Shop, names=("retail", "shop"))

        `names[0]`, the World (session scope); `names[1]`, a fresh `driver` per test (small scale,
        seed 0, made by `world_driver`: the test fails if it hits a simulator bug); `episode`, that
        driver's episode."""
        world_name, driver_name = names

        @pytest.fixture(scope="session", name=world_name)
        def the_world() -> World:
            return world

        @pytest.fixture(name=driver_name)
        def the_driver(world_driver: Callable[..., WorldDriver]) -> WorldDriver:
            """A fresh small-scale episode, seed 0; the test fails if it hits a simulator bug."""
            return world_driver(world, driver=driver)

        @pytest.fixture(name="episode")
        def the_episode(request: pytest.FixtureRequest) -> Episode:
            made: WorldDriver = request.getfixturevalue(driver_name)
            return made.ep

        return the_world, the_driver, the_episode
