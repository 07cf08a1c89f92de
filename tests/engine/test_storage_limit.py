"""An episode's storage limit (issue 29, item 3): SQLite's `max_page_count` caps the database; a
tool call writing past it is rolled back and answered with the reason, the state and change log
unchanged; forks, snapshots restored, parked and reloaded episodes keep it; the operator's own
writes are never refused; the records of refused calls past the limit stay bounded."""

from __future__ import annotations

import pytest

from mcpsim.engine._episode import Episode
from mcpsim.engine._storage import FULL_MESSAGE, StorageLimit, is_full
from mcpsim.engine._templates import TemplateCache
from mcpsim.world import World

ROOM = 64 * 1024  # what each test episode may grow by


def owner(i: int) -> str:
    return f"owner {i:04d} " + "y" * 88  # the longest name open_account takes (100)


def fill(episode: Episode, start: int = 0, most: int = 2000) -> tuple[int, str]:
    """Open accounts until a call fails; the number of calls made and the error."""
    for i in range(start, start + most):
        result = episode.call("open_account", {"owner": owner(i)})
        if result.error is not None:
            return i - start, result.error
    pytest.fail(f"{most} calls never reached the storage limit")


@pytest.fixture
def limited(ledger: World, templates: TemplateCache) -> Episode:
    episode = Episode.create(ledger, 0, "small", templates=templates)
    episode.limit_storage(episode.size_bytes + ROOM)
    yield episode
    episode.close()


def test_a_write_past_the_limit_is_a_tool_error_and_changes_nothing(limited: Episode):
    limit = limited._db.limit
    assert limit is not None
    calls, error = fill(limited)
    assert calls > 10  # the room was used first
    assert error == FULL_MESSAGE.format(limit=limit.max_bytes)
    assert "nothing was changed" in error and str(limit.max_bytes) in error
    state, changes, counter = limited.state_hash(), limited.changes(), limited.calls
    accounts = limited.query("SELECT count(*) AS n FROM account")
    for i in range(5):  # still full: each one refused, nothing changed
        result = limited.call("open_account", {"owner": owner(10_000 + i)})
        assert result.error == error and not result.bug and not result.changes
    assert (limited.state_hash(), limited.changes(), limited.calls) == (state, changes, counter)
    assert limited.query("SELECT count(*) AS n FROM account") == accounts
    assert not limited.flagged  # the agent's doing, not a simulator bug
    last = limited.transcript()[-1]
    assert (last.tool, last.ok, last.error, last.call_seq) == ("open_account", False, error, None)
    # The database stays within the limit and its small reserve.
    assert limited.size_bytes <= limit.max_bytes + limit.reserve_pages * limit.page_size
    assert limited.size_bytes == len(limited.snapshot())
    # Reads still answer.
    assert limited.call("list_accounts", {}).error is None


def test_the_operators_sql_console_is_never_refused(ledger: World, templates: TemplateCache):
    episode = Episode.create(ledger, 0, "small", templates=templates)
    episode.limit_storage(episode.size_bytes + 8 * 4096)
    state = episode.state_hash()
    # task setup's UPDATE, far past the limit
    assert episode.edit("UPDATE account SET owner = ?", ("z" * 200_000,)) == 3
    assert episode.state_hash() != state
    episode.close()


def test_forks_snapshots_parked_and_reloaded_episodes_keep_the_limit(limited: Episode):
    calls, error = fill(limited)
    fork = limited.fork("fork")
    assert fork._db.limit == limited._db.limit
    assert fork.call("open_account", {"owner": owner(20_000)}).error == error
    restored = Episode.restore(limited.world, limited.snapshot(), id="restored")
    restored.limit_storage(limited._db.limit.max_bytes)  # what EpisodeManager.add does
    assert restored.call("open_account", {"owner": owner(20_001)}).error == error
    assert limited.park()  # its connection closed; the next call rebuilds it
    assert limited.call("open_account", {"owner": owner(20_002)}).error == error
    with limited._open():  # a shared episode's database replaced in place (another process wrote it)
        limited._reload(limited.conn.serialize())
    assert limited.call("open_account", {"owner": owner(20_003)}).error == error
    for episode in (fork, restored):
        episode.close()


def test_an_episode_without_a_limit_grows_past_where_the_limit_stopped(ledger: World, templates: TemplateCache):
    episode = Episode.create(ledger, 0, "small", templates=templates)
    start = episode.size_bytes
    for i in range(400):  # more than filled ROOM above
        assert episode.call("open_account", {"owner": owner(i)}).error is None
    assert episode.size_bytes > start + ROOM
    episode.limit_storage(episode.size_bytes + ROOM)
    episode.limit_storage(None)  # and lifted again
    assert episode._db.limit is None
    assert episode.call("open_account", {"owner": owner(401)}).error is None
    episode.close()


def test_the_operators_writes_at_the_limit_are_never_refused(limited: Episode):
    fill(limited)
    limited.verdict = {"passed": False, "reason": "r" * 300_000}  # far larger than the reserve
    limited.end()
    assert limited.ended and limited.verdict["reason"] == "r" * 300_000
    limited.set_faults(None)
    result = limited.call("open_account", {"owner": "late"})
    assert result.error is not None and "ended" in result.error


def test_refused_calls_past_the_limit_are_recorded_until_the_reserve_is_full_then_dropped(limited: Episode):
    fill(limited)
    limit = limited._db.limit
    big = {"owner": "x", "junk": "j" * 1_000_000}  # refused by the schema, stored truncated to 4 KB
    for _ in range(200):  # about 800 KB of records: more than the reserve holds
        assert limited.call("open_account", big).is_error
    assert limited.size_bytes <= limit.max_bytes + limit.reserve_pages * limit.page_size
    kept = [c for c in limited.transcript() if isinstance(c.arguments, dict) and "$truncated" in c.arguments]
    assert 0 < len(kept) < 200  # recorded while the reserve had room, then dropped
    assert limited.call("no_such_tool", big).is_error  # still answered, never a crash


def test_the_limit_is_checked():
    with pytest.raises(ValueError, match="positive number of bytes"):
        StorageLimit(0, 4096)
    assert StorageLimit(10 * 4096, 4096).pages == 10
    assert StorageLimit(100, 4096).pages == 1
    assert not is_full(ValueError("database or disk is full"))
