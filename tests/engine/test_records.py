"""Typed records where dicts used to cross modules: an episode's metadata (`EpisodeMeta`), what the
fault injector did (`FaultRecord`), a stored verdict (`Verdict` / `VerdictSummary`) and the control
plane's episode info (`EpisodeInfo`). The database and JSON formats are the ones written before
the records existed: tests/support/data/episode_meta_format5.json holds the metadata rows, call faults and
`_faults` change-log rows of a graded, flagged, faulted task episode written by mcpsim before
(store FORMAT 5), and each must still read, and write back byte for byte."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import pytest

from mcpsim.engine import _store as store
from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import FaultProfile
from mcpsim.grading import Verdict
from mcpsim.grading._verdict import DiffEntry, StoredVerdictError, VerdictSummary, load_verdict, shown
from mcpsim.serve._control import EpisodeInfo

OLD = json.loads(
    (Path(__file__).parents[1] / "support" / "data" / "episode_meta_format5.json").read_text(encoding="utf-8")
)
OLD_META: dict[str, str] = dict(OLD["meta"])  # key -> the value's JSON text, as stored


def old_episode(ledger, templates) -> Episode:
    """A ledger episode whose META table holds exactly the old database's rows."""
    conn = store.connect(templates.get(ledger, OLD["seed"], OLD["scale"]))
    conn.execute(f"DELETE FROM {store.META}")
    conn.executemany(f"INSERT INTO {store.META}(key, value) VALUES (?, ?)", OLD_META.items())
    return Episode(ledger, conn, id="old")


def meta_rows(episode: Episode) -> dict[str, str]:
    return dict(episode.conn.execute(f"SELECT key, value FROM {store.META}"))


def test_the_old_metadata_reads_as_an_episode_meta(ledger, templates):
    episode = old_episode(ledger, templates)
    meta = episode.meta()
    assert (meta.world, meta.seed, meta.scale, meta.task) == ("ledger", 1, "small", "pay-and-open")
    assert meta.clock == datetime.fromisoformat("2026-05-15T09:01:30+00:00") and meta.call_seq == 3
    assert meta.ended and len(meta.flags) == 1 and "deliberate bug" in meta.flags[0]
    assert isinstance(meta.faults, FaultProfile) and meta.faults.name == "old-format"
    assert meta.fault_attempts == {"get_account": 2, "transfer": 1, "open_account": 2, "close_account_buggy": 1}
    assert meta.ids == {"account": 4} and meta.base_hash == json.loads(OLD_META["base_hash"])
    assert not meta.edge_data  # never written: the default
    assert (episode.seed, episode.task_id, episode.faults, episode.ended) == (1, "pay-and-open", meta.faults, True)
    assert episode.flags == list(meta.flags) and episode.calls == 3


def test_writing_the_old_metadata_back_stores_the_same_json_text(ledger, templates):
    episode = old_episode(ledger, templates)
    meta = episode.meta()
    store.write_meta(episode.conn, {key: getattr(meta, key) for key in OLD_META})  # type: ignore[misc]
    assert meta_rows(episode) == OLD_META
    assert meta.rows(only_set=False)["clock"] == "2026-05-15T09:01:30+00:00"  # isoformat, not pydantic's "Z"


def test_a_new_template_writes_only_what_it_sets_in_the_old_format(ledger, templates):
    rows = meta_rows(Episode.create(ledger, 1, "small", templates=templates))
    assert set(rows) == {"world", "version", "seed", "scale", "call_seq", "clock", "ids", "base_hash"}
    assert rows["clock"] == json.dumps(ledger.epoch.isoformat()) and rows["call_seq"] == "0"


def test_an_old_verdict_loads_as_a_verdict_and_dumps_unchanged():
    stored = json.loads(OLD_META["verdict"])
    verdict = load_verdict(stored)
    assert isinstance(verdict, Verdict) and not verdict.passed and verdict.task_id == "pay-and-open"
    assert verdict.model_dump(mode="json") == stored


def test_old_fault_records_read_typed_and_are_written_back_identically(ledger, templates):
    episode = old_episode(ledger, templates)
    with episode._lock:
        episode.conn.execute(f"DELETE FROM {store.CALLS}")
        episode.conn.execute(f"DELETE FROM {store.CHANGES}")
        for _, tool, fault in OLD["call_faults"]:
            refused: dict[str, Any] = {
                "ok": False,
                "error": "refused",
                "bug": False,
                "result": None,
                "clock": "c",
                "writes": False,
            }
            store.record_call(episode.conn, None, tool, {}, **refused, fault=json.loads(fault))
        calls = [r[0] for r in episode.conn.execute(f"SELECT fault FROM {store.CALLS} ORDER BY seq")]
        changes = [
            list(r) for r in episode.conn.execute(f"SELECT call_seq, tbl, op, pk, before, after FROM {store.CHANGES}")
        ]
    assert calls == [fault for _, _, fault in OLD["call_faults"]]
    assert changes == OLD["fault_changes"]
    records = [r.fault for r in episode.transcript()]
    assert records == [{"kind": "transient", "attempt": 1}, {"kind": "rate_limit", "attempt": 1, "retry_after_s": 7}]
    logged = episode.changes()
    assert [c.fault for c in logged] == records and all(c.op == "fault" and c.table == store.FAULTS for c in logged)
    assert store.net_changes(logged) == {}  # a fault is no row


def test_a_row_change_is_no_fault(ledger, templates):
    episode = Episode.create(ledger, 1, "small", templates=templates)
    result = episode.call("open_account", {"owner": "Zoe"})
    assert result.changes and all(c.op == "insert" and c.fault is None for c in result.changes)


def test_metadata_keys_are_exactly_the_record_fields():
    assert set(get_args(store.MetaKey)) == set(store.EpisodeMeta.model_fields)


def test_writing_an_unknown_key_or_a_wrong_value_is_refused_with_the_reason(ledger, templates):
    episode = Episode.create(ledger, 1, "small", templates=templates)
    with pytest.raises(store.MetaError, match="'endd' is not a field of an episode's metadata"):
        store.write_meta(episode.conn, {"endd": True})  # type: ignore[dict-item]
    with pytest.raises(store.MetaError, match="invalid value for the episode's call_seq"):
        store.write_meta(episode.conn, {"call_seq": "many"})
    with pytest.raises(store.MetaError, match="invalid value for the episode's faults"):
        store.write_meta(episode.conn, {"faults": {"name": "x", "no_such_setting": 1}})
    assert episode.calls == 0 and episode.faults is None  # nothing was written


def test_a_database_that_is_not_an_episode_says_what_its_metadata_lacks(ledger, templates):
    conn = store.connect(templates.get(ledger, 1, "small"))
    conn.execute(f"DELETE FROM {store.META} WHERE key IN ('world', 'seed')")
    with pytest.raises(store.MetaError, match=r"not an mcpsim episode database.*world: Field required.*seed"):
        store.read_meta(conn)
    with pytest.raises(store.MetaError, match="its metadata has no world"):
        store.meta_value(conn, "world")
    assert store.meta_value(conn, "flags") == () and store.meta_value(conn, "verdict") is None  # defaults


def full_verdict() -> Verdict:
    return Verdict.model_validate(json.loads(OLD_META["verdict"]))


def test_a_summary_keeps_the_outcome_and_which_checks_passed_and_nothing_they_expected():
    verdict = full_verdict()
    summary = verdict.summary()
    assert summary.model_dump(mode="json") == {
        "detail": "summary",
        "task_id": verdict.task_id,
        "episode_id": verdict.episode_id,
        "passed": verdict.passed,
        "reward": verdict.reward,
        "partial_reward": verdict.partial_reward,
        "failure": verdict.failure,
        "checks": [{"check": f"{i}:{c.type}", "passed": c.passed} for i, c in enumerate(verdict.checks, 1)],
    }
    assert summary.summary() is summary
    assert isinstance(load_verdict(summary.model_dump(mode="json")), VerdictSummary)


def test_what_a_caller_is_shown_of_a_stored_verdict():
    verdict = full_verdict()
    assert shown(verdict, "full") is verdict
    assert shown(verdict, "summary") == verdict.summary()
    assert shown(verdict.summary(), "full") == verdict.summary()  # stored as a summary: no more to show


def test_a_stored_verdict_that_is_neither_model_is_refused_by_name():
    with pytest.raises(StoredVerdictError, match="not a Verdict"):
        load_verdict({"reward": 1.0, "passed": True})
    with pytest.raises(StoredVerdictError, match="not a VerdictSummary"):
        load_verdict({"detail": "summary", "checks": [{"check": "1:x"}]})


def test_a_diff_entry_op_is_a_row_operation():
    with pytest.raises(ValueError, match="insert"):
        DiffEntry(table="t", key="1", op="fault")


def test_episode_info_is_read_from_the_metadata_at_once(ledger, templates):
    episode = old_episode(ledger, templates)
    info = EpisodeInfo.of(episode, "http://127.0.0.1:1/episodes/old/mcp")
    assert info.to_json() == {
        "id": "old",
        "mcp_url": "http://127.0.0.1:1/episodes/old/mcp",
        "world": "ledger",
        "world_version": json.loads(OLD_META["version"]),
        "seed": 1,
        "scale": "small",
        "task": "pay-and-open",
        "faults": "old-format",
        # counted from the transcript (refused calls too), which this fixture leaves empty: only
        # its META rows are the old database's
        "calls": 0,
        "calls_ok": 0,
        "calls_failed": 0,
        "clock": "2026-05-15T09:01:30+00:00",
        "ended": True,
        "flagged": True,
        "flags": list(episode.flags),
    }


def test_episode_info_of_a_fresh_episode_matches_the_episode(ledger, templates):
    episode = Episode.create(ledger, 2, "small", templates=templates)
    episode.call("open_account", {"owner": "Zoe"})
    shown_info: dict[str, Any] = EpisodeInfo.of(episode, "u").to_json()
    assert shown_info["calls"] == 1 and shown_info["clock"] == episode.clock().isoformat()
    assert (shown_info["task"], shown_info["faults"], shown_info["ended"], shown_info["flags"]) == (
        None,
        None,
        False,
        [],
    )
