"""The seeded workspace: sizes per scale, determinism, consistency, the time zone database. (The
world over MCP is checked by tests/world/test_contract.py.)"""

from __future__ import annotations

from zoneinfo import ZoneInfo, available_timezones

import pytest
from workspace_support import ME

from mcpsim.engine._episode import Episode
from tests.support.seed_checks import counts, large_scale_test, other_seed_test, small_built_fast


def test_the_standard_time_zone_database_is_available():
    # zoneinfo reads the system tz database (or the tzdata package); the world needs both kinds of zone.
    assert {"Europe/London", "Asia/Kolkata", "Australia/Sydney", "America/New_York"} <= available_timezones()
    from datetime import datetime

    assert datetime(2026, 5, 15, 9, tzinfo=ZoneInfo("Asia/Kolkata")).utcoffset().total_seconds() == 5.5 * 3600


def test_the_small_scale_builds_fast_with_the_story_in_it(workspace):
    ep = small_built_fast(workspace, 7)
    sizes = counts(ep)
    assert sizes["users"] == 1 + 12 + 12 and sizes["labels"] == 9 and sizes["files"] == 14 + 15
    assert ep.query("SELECT email FROM users WHERE is_owner")[0]["email"] == ME
    assert sizes["threads"] >= 19 + 20 and sizes["events"] >= 18 + 15 and sizes["contacts"] >= 9


# What no seeded workspace holds: each query finds the rows that break one rule.
BROKEN = {
    # Every thread has messages; its last_message_at is its newest message; trash remembers where it was.
    "threads without messages": "SELECT t.id FROM threads t LEFT JOIN messages m ON m.thread_id = t.id "
    "WHERE m.id IS NULL",
    "threads whose last_message_at is not their newest message": "SELECT t.id FROM threads t "
    "WHERE last_message_at != (SELECT MAX(sent_at) FROM messages WHERE thread_id = t.id)",
    "threads in no known place": "SELECT id FROM threads WHERE location NOT IN ('inbox', 'sent', 'archived', 'trash')",
    "trash that forgot where it was": "SELECT id FROM threads "
    "WHERE (location = 'trash') != (location_before_trash IS NOT NULL)",
    # Every message involves the owner; attachments can be opened by their recipients.
    "messages without the owner": "SELECT m.id FROM messages m WHERE m.from_email != :me AND NOT EXISTS "
    "(SELECT 1 FROM message_recipients r WHERE r.message_id = m.id AND r.email = :me)",
    "attachments a recipient cannot open": "SELECT a.* FROM message_attachments a "
    "JOIN messages m ON m.id = a.message_id JOIN message_recipients r ON r.message_id = m.id "
    "JOIN files f ON f.id = a.file_id WHERE f.owner_email != r.email AND f.link_sharing = 'off' "
    "AND NOT EXISTS (SELECT 1 FROM file_permissions p WHERE p.file_id = f.id AND p.email = r.email)",
    # Sharing: roles are exact, owners hold no grant, confidential files stay inside the company.
    "unknown roles": "SELECT * FROM file_permissions WHERE role NOT IN ('viewer', 'commenter', 'editor')",
    "grants to the owner": "SELECT p.* FROM file_permissions p JOIN files f ON f.id = p.file_id "
    "WHERE p.email = f.owner_email",
    "confidential files shared outside": "SELECT p.* FROM file_permissions p JOIN files f ON f.id = p.file_id "
    "WHERE f.confidential AND p.email NOT LIKE '%@larkspurlabs.com'",
    "confidential files with a link": "SELECT * FROM files WHERE confidential AND link_sharing != 'off'",
    # Events: organizers are in the directory, never their own attendees; series end after they start.
    "organizers outside the directory": "SELECT e.id FROM events e LEFT JOIN users u ON u.email = e.organizer_email "
    "WHERE u.id IS NULL",
    "organizers attending their own events": "SELECT * FROM event_attendees a JOIN events e ON e.id = a.event_id "
    "WHERE a.email = e.organizer_email",
    "events ending before they start": "SELECT id FROM events WHERE series_end_utc < end_utc OR end_utc <= start_utc",
    "series with both or neither end": "SELECT id FROM events WHERE recur_freq != 'none' "
    "AND (recur_count IS NULL) = (recur_until IS NULL)",
    # Contacts are unique.
    "contacts twice": "SELECT email FROM contacts GROUP BY email HAVING COUNT(*) > 1",
}


def assert_consistent(ep: Episode) -> None:
    assert ep.query("SELECT COUNT(*) n FROM users WHERE is_owner")[0]["n"] == 1
    broken = {rule: rows for rule, sql in BROKEN.items() if (rows := ep.query(sql, {"me": ME}))}
    assert broken == {}


def test_the_small_scale_is_consistent(episode):
    assert_consistent(episode)


@pytest.mark.slow
def test_the_default_scale_is_realistic_and_consistent(workspace, templates):
    ep = Episode.create(workspace, seed=0, scale="default", templates=templates)
    sizes = counts(ep)
    assert sizes["users"] >= 90 and sizes["threads"] >= 500 and sizes["messages"] >= 1000
    assert sizes["events"] >= 300 and sizes["files"] >= 250 and sizes["contacts"] >= 100
    assert_consistent(ep)


# That the same seed builds identical tables is checked for every world by tests/world/test_contract.py.
test_another_seed_builds_other_filler = other_seed_test("workspace", differ={"users": "name"})
test_the_large_scale_has_tens_of_thousands_of_rows = large_scale_test(
    "workspace", "~5 s", assert_consistent, total=50_000, messages=15_000
)
