"""One trajectory journal (issue 12, item 2; issue 11, item 8): `mcpsim.trajectories._journal` is
the one writer and reader of trajectory JSONL files, with one crash policy. Finished episodes are
fsynced lines; live episodes journal their calls as they happen, and the calls of an episode that
was live at a crash come back on restart; a torn last line is dropped, any other bad line named."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from mcpsim.engine._episode import Episode
from mcpsim.runner._run import RunConfig, RunError, run_episodes
from mcpsim.trajectories._journal import (
    Journal,
    JournalError,
    LiveHeader,
    iter_trajectories,
    read_trajectories,
)
from mcpsim.trajectories._records import Trajectory
from mcpsim.trajectories._served import Recorder, call_logs, episode_trajectory


def trajectory(episode_id: str, **fields: object) -> Trajectory:
    return Trajectory(
        episode_id=episode_id,
        world="ledger",
        world_version="v",
        agent="a",
        status="completed",
        termination="recorded",
        **fields,
    )


@pytest.fixture
def episode(templates, ledger) -> Episode:
    return Episode.create(ledger, 0, "small", id="ep1", templates=templates)


def drive(episode: Episode) -> None:
    """A read, a write, a business error, a refused call and a tool bug."""
    accounts = episode.call("list_accounts").value
    assert not episode.call(
        "transfer", {"from_account": accounts[0].id, "to_account": accounts[1].id, "amount": 1.5}
    ).is_error
    assert episode.call("get_account", {"account_id": "acc_nope"}).is_error
    assert episode.call("transfer", {"from_account": 1}).is_error
    assert episode.call("close_account_buggy", {"account_id": accounts[2].id}).bug


# -- the file -----------------------------------------------------------------------------------


def test_an_appended_episode_is_fsynced_and_reads_back(tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    journal = Journal(tmp_path / "out")
    journal.append(trajectory("a"))
    assert synced, "an appended episode is fsynced before append returns"
    journal.append(trajectory("b", error="\udcff"))  # a lone surrogate still encodes
    assert [t.episode_id for t in journal.read()] == ["a", "b"]
    assert read_trajectories(tmp_path / "nowhere.jsonl") == []


def test_a_torn_last_line_is_dropped_when_read_and_cut_away_when_the_journal_opens(tmp_path):
    whole = trajectory("a").model_dump_json()
    path = tmp_path / "trajectories.jsonl"
    path.write_text(whole + "\n" + whole[:50])
    assert [t.episode_id for t in read_trajectories(path)] == ["a"]
    journal = Journal(tmp_path)
    assert path.read_text() == whole + "\n"
    journal.append(trajectory("b"))  # starts on a line of its own
    assert [t.episode_id for t in journal.read()] == ["a", "b"]


def test_a_torn_last_line_longer_than_the_read_block_is_found(tmp_path):
    whole = trajectory("a").model_dump_json()
    torn = trajectory("b", error="x" * 200_000).model_dump_json()[:150_000]
    (tmp_path / "trajectories.jsonl").write_text(whole + "\n" + torn)
    assert [t.episode_id for t in Journal(tmp_path).read()] == ["a"]


def test_any_other_bad_line_is_an_error_naming_the_file_and_line(tmp_path):
    path = tmp_path / "trajectories.jsonl"
    path.write_text(
        trajectory("a").model_dump_json() + '\n{"not": "a trajectory"}\n' + trajectory("c").model_dump_json() + "\n"
    )
    with pytest.raises(JournalError, match=r"trajectories.jsonl:2 is not a trajectory"):
        read_trajectories(path)
    bad: list[int] = []
    ids = [t.episode_id for t in iter_trajectories(path, on_bad=lambda n, line, exc: bad.append(n))]
    assert ids == ["a", "c"] and bad == [2]


def test_the_runner_reads_and_writes_through_the_journal(tmp_path):
    (tmp_path / "trajectories.jsonl").write_text("garbage\n")

    async def run() -> None:
        await run_episodes(RunConfig(world="ledger", tasks=[], out=tmp_path), None, None, None)  # type: ignore[arg-type]

    with pytest.raises(RunError, match="trajectories.jsonl:1 is not a trajectory"):
        anyio.run(run)


# -- live episodes ------------------------------------------------------------------------------


def test_the_live_journal_holds_every_call_exactly_as_the_trajectory_does(tmp_path, episode):
    recorder = Recorder(tmp_path)
    recorder.track(episode)
    episode.call("list_accounts")
    recorder.sync(episode)
    drive(episode)
    recorder.sync(episode)
    recorder.sync(episode)  # nothing new: nothing written twice
    lines = [json.loads(x) for x in (tmp_path / "live" / "ep1.jsonl").read_text().splitlines()]
    assert lines[0]["header"]["episode_id"] == "ep1" and lines[0]["header"]["policy"] == episode.world.policy
    journaled = [line["call"] for line in lines[1:]]
    assert journaled == [c.model_dump(mode="json") for c in call_logs(episode)]
    assert len(journaled) == 6 and any(c["changes"] for c in journaled)


def test_a_forked_episode_brings_its_calls_into_its_own_journal(tmp_path, episode):
    recorder = Recorder(tmp_path)
    drive(episode)
    fork = episode.fork(id="ep2")
    recorder.track(fork)
    fork.call("list_accounts")
    recorder.sync(fork)
    lines = (tmp_path / "live" / "ep2.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 5 + 1


def crash(recorder: Recorder) -> None:
    """What a killed process leaves: the files as they are, nothing flushed at exit."""
    del recorder


def test_the_calls_of_an_episode_live_at_a_crash_come_back_on_restart(tmp_path, episode):
    recorder = Recorder(tmp_path)
    recorder.track(episode)
    drive(episode)
    recorder.sync(episode)
    expected = episode_trajectory(episode)
    crash(recorder)
    restarted = Recorder(tmp_path)
    assert restarted.recovered == ["ep1"]
    (lost,) = Journal(tmp_path).read()
    assert lost.status == "error" and lost.termination == "server_error" and "stopped abruptly" in lost.error
    assert lost.calls == expected.calls and lost.messages == expected.messages
    assert (lost.world, lost.world_version, lost.seed) == (expected.world, expected.world_version, expected.seed)
    assert not list((tmp_path / "live").iterdir())
    assert Recorder(tmp_path).recovered == []  # recovered once


def test_an_ended_episode_that_made_calls_after_it_was_written_is_recovered_with_them(tmp_path, episode):
    recorder = Recorder(tmp_path)
    recorder.track(episode)
    episode.call("list_accounts")
    episode.end()
    recorder.ended(episode)  # written: one call
    episode.call("list_accounts")  # a read after the end
    recorder.sync(episode)
    crash(recorder)
    assert Recorder(tmp_path).recovered == ["ep1"]
    ended, lost = Journal(tmp_path).read()
    assert len(ended.calls) == 1 and len(lost.calls) == 2 and lost.termination == "server_error"


def test_a_graded_or_fully_written_episode_is_not_recovered(tmp_path, episode, templates, ledger):
    recorder = Recorder(tmp_path)
    recorder.track(episode)
    episode.call("list_accounts")
    episode.verdict = {"reward": 1.0, "passed": True}
    recorder.ended(episode)  # a verdict is final
    other = Episode.create(ledger, 0, "small", id="ep2", templates=templates)
    recorder.track(other)
    other.call("list_accounts")
    other.end()
    recorder.ended(other)  # written with every call it made
    crash(recorder)
    assert Recorder(tmp_path).recovered == []
    assert [t.episode_id for t in Journal(tmp_path).read()] == ["ep1", "ep2"]


def test_an_episode_appended_just_before_the_crash_is_not_written_twice(tmp_path, episode):
    """The crash fell between appending the episode (fsynced) and marking its live journal written."""
    recorder = Recorder(tmp_path)
    recorder.track(episode)
    drive(episode)
    recorder.sync(episode)
    Journal(tmp_path).append(episode_trajectory(episode))
    crash(recorder)
    assert Recorder(tmp_path).recovered == []
    assert [t.episode_id for t in Journal(tmp_path).read()] == ["ep1"]


def test_a_live_journal_torn_by_the_crash_keeps_its_whole_lines(tmp_path, episode):
    recorder = Recorder(tmp_path)
    recorder.track(episode)
    drive(episode)
    recorder.sync(episode)
    path = tmp_path / "live" / "ep1.jsonl"
    path.write_bytes(path.read_bytes()[:-20])  # the last call's line cut short
    assert Recorder(tmp_path).recovered == ["ep1"]
    (lost,) = Journal(tmp_path).read()
    assert len(lost.calls) == 4


def test_an_episode_that_started_and_made_no_call_is_recovered_as_a_stub_and_junk_is_skipped(tmp_path):
    journal = Journal(tmp_path)
    journal.start_live(LiveHeader(episode_id="quiet", world="ledger", world_version="v", task_id="t1", seed=3))
    (tmp_path / "live" / "junk.jsonl").write_text("not json\n")
    (tmp_path / "live" / ".half.tmp").write_text("{")
    assert Journal(tmp_path).recover() == ["quiet"]
    (stub,) = Journal(tmp_path).read()
    assert (stub.episode_id, stub.task_id, stub.seed, stub.calls) == ("quiet", "t1", 3, [])
    assert not list(Path(tmp_path / "live").iterdir())


def test_a_deleted_episode_is_written_and_its_live_journal_removed(tmp_path, episode):
    recorder = Recorder(tmp_path)
    recorder.track(episode)
    drive(episode)
    recorder.record(episode)
    recorder.sync(episode)  # a sync that raced the removal writes nothing
    assert not (tmp_path / "live" / "ep1.jsonl").exists()
    (written,) = Journal(tmp_path).read()
    assert written.status == "completed" and len(written.calls) == 5
