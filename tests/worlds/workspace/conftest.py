"""Fixtures for the workspace world's tests: a fresh small-scale episode per test (the fixed story
of seed_story.py is present at every scale), and helpers that find test data by querying the
seeded database instead of hard-coding ids."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcpsim_worlds.workspace import world as workspace_world

from mcpsim.engine.episode import Episode
from mcpsim.testing import WorldDriver
from mcpsim.world import World


class Desk(WorldDriver):
    """A workspace episode plus the queries the tests keep needing."""

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
def desk(workspace: World, world_driver: Callable[..., Any]) -> Desk:
    """A fresh small-scale episode, seed 0; the test fails if it hits a simulator bug."""
    return world_driver(workspace, driver=Desk)


@pytest.fixture
def episode(desk: Desk) -> Episode:
    return desk.ep
