"""Fixtures for the workspace world's tests: a fresh small-scale episode per test (the fixed story
of seed_story.py is present at every scale), and helpers that find test data by querying the
seeded database instead of hard-coding ids."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcpsim_worlds.workspace import world as workspace_world

from mcpsim.engine.episode import CallResult, Episode
from mcpsim.engine.templates import TemplateCache
from mcpsim.world import World


class Desk:
    """An episode plus the queries the tests keep needing."""

    def __init__(self, episode: Episode) -> None:
        self.ep = episode

    def call(self, tool: str, **arguments: Any) -> CallResult:
        return self.ep.call(tool, arguments)

    def ok(self, tool: str, **arguments: Any) -> Any:
        result = self.ep.call(tool, arguments)
        assert not result.is_error, f"{tool} failed: {result.error}"
        return result.value

    def fails(self, tool: str, message: str, **arguments: Any) -> CallResult:
        """The call fails with `message` in its error, as a business error, and changes nothing."""
        before = self.ep.state_hash()
        result = self.ep.call(tool, arguments)
        assert result.is_error, f"{tool} succeeded but should fail with {message!r}"
        assert not result.bug, result.error
        assert message in result.error, result.error
        assert result.changes == []
        assert self.ep.state_hash() == before
        return result

    def invalid(self, tool: str, **arguments: Any) -> str:
        """The arguments break the tool's schema: refused before it runs, nothing changes."""
        before = self.ep.state_hash()
        result = self.ep.call(tool, arguments)
        assert result.is_error and result.error.startswith(f"Invalid arguments for {tool}"), result.error
        assert self.ep.state_hash() == before
        return result.error

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        return self.ep.query(sql, params)

    def row(self, sql: str, *params: Any) -> dict[str, Any]:
        rows = self.rows(sql, *params)
        assert rows, f"the seeded data has no row for: {sql} {params}"
        return rows[0]

    def value(self, sql: str, *params: Any) -> Any:
        return next(iter(self.row(sql, *params).values()))

    # -- story finds -------------------------------------------------------------------------

    def thread(self, subject_start: str) -> dict[str, Any]:
        return self.row("SELECT * FROM threads WHERE subject LIKE ? ORDER BY id", subject_start + "%")

    def file(self, name: str) -> dict[str, Any]:
        return self.row("SELECT * FROM files WHERE name = ?", name)

    def event(self, title: str) -> dict[str, Any]:
        return self.row("SELECT * FROM events WHERE title = ?", title)

    def grants(self, file_id: str) -> dict[str, str]:
        return {r["email"]: r["role"] for r in self.rows("SELECT * FROM file_permissions WHERE file_id = ?", file_id)}

    def location(self, thread_id: str) -> str:
        return self.value("SELECT location FROM threads WHERE id = ?", thread_id)


@pytest.fixture(scope="session")
def workspace() -> World:
    return workspace_world


@pytest.fixture
def episode(workspace: World, templates: TemplateCache) -> Iterator[Episode]:
    ep = Episode.create(workspace, seed=0, scale="small", templates=templates)
    yield ep
    # No test may hit a simulator bug: every failure must be a business or validation error.
    assert ep.flags == [], ep.flags
    ep.close()


@pytest.fixture
def desk(episode: Episode) -> Desk:
    return Desk(episode)
