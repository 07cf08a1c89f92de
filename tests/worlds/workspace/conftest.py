"""Fixtures for the workspace world's tests: a fresh small-scale episode per test (the fixed story
of seed_story.py is present at every scale), and helpers that find test data by querying the
seeded database instead of hard-coding ids."""

from __future__ import annotations

from typing import Any

from mcpsim_worlds.workspace import world as workspace_world

from mcpsim import CallResult
from mcpsim.testing._driver import WorldDriver, world_fixtures


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

    # -- refusals the tests keep checking -----------------------------------------------------

    def update_fails(self, event: dict[str, Any], message: str, **changes: Any) -> CallResult:
        """update_event on `event` (a row) with `changes` fails with `message` and changes nothing."""
        return self.fails("update_event", message, event_id=event["id"], **changes)

    def sharing_fails(self, file: dict[str, Any], message: str, emails: list[str], role: str = "viewer") -> CallResult:
        """share_file of `file` (a row) with `emails` as `role` fails with `message` and changes nothing."""
        return self.fails("share_file", message, file_id=file["id"], emails=emails, role=role)


workspace, desk, episode = world_fixtures(workspace_world, Desk, names=("workspace", "desk"))
