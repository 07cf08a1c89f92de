"""Fixtures for the workspace world's tests: a fresh small-scale episode per test (the fixed story
of seed_story.py is present at every scale), and helpers that find test data by querying the
seeded database instead of hard-coding ids."""

from __future__ import annotations

from typing import Any

from mcpsim_worlds.workspace import world as workspace_world

from mcpsim.testing import WorldDriver, world_fixtures


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


workspace, desk, episode = world_fixtures(workspace_world, Desk, names=("workspace", "desk"))
