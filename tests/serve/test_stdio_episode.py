"""`mcpsim serve WORLD --episode PATH`: one episode shared by every stdio server process started with
the same file, for clients that start a process per tool call. Real stdio server processes, the MCP
SDK's client, a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner, Result
from mcp import Client

from mcpsim import Episode
from mcpsim.cli import main
from mcpsim.serve._stdio import EpisodeFileError, FileEpisode
from mcpsim.testing._driver import stdio_server
from mcpsim.world._registry import load_world

pytestmark = pytest.mark.anyio

CUSTOMER = "cus_0558461"  # the first customer of retail, seed 0, small scale


def _address(line1: str) -> dict[str, str]:
    return {"customer_id": CUSTOMER, "line1": line1, "city": "Springfield", "state": "IL", "zip": "62701"}


async def _one_call(tool: str, arguments: dict[str, object], *extra: str) -> str:
    """One tool call in a server process of its own, as per-call clients do; the result's text."""
    with anyio.fail_after(120):
        async with Client(stdio_server("retail", extra_args=extra), mode="legacy") as client:
            result = await client.call_tool(tool, arguments)
    return " ".join(getattr(block, "text", "") for block in result.content)


async def _lines(*extra: str) -> str:
    return await _one_call("get_customer_details", {"customer_id": CUSTOMER}, *extra)


@pytest.mark.system
async def test_writes_survive_across_processes_only_with_episode(tmp_path: Path) -> None:
    await _one_call("add_customer_address", _address("1 Lost Lane"))
    assert "1 Lost Lane" not in await _lines()  # without --episode: each process starts afresh

    path = tmp_path / "episode.db"
    await _one_call("add_customer_address", _address("2 Kept Road"), "--episode", str(path))
    assert "2 Kept Road" in await _lines("--episode", str(path))

    episode = Episode.restore(load_world("retail"), path.read_bytes())  # a plain episode database
    assert [c.tool for c in episode.transcript()] == ["add_customer_address", "get_customer_details"]
    assert episode.calls == 2


def _attach(path: Path, seed: int = 0) -> FileEpisode:
    world = load_world("retail")
    identity = {"world": "retail", "seed": seed, "scale": "small", "task": None}
    return FileEpisode.attach(world, path, identity, lambda: Episode.create(world, seed, "small"))


@pytest.mark.system
async def test_concurrent_processes_serialise_their_writes(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "episode.db"  # its folder is made too
    _attach(path)  # created first (in this process); the servers attach at once
    lines = [f"{n} Parallel Street" for n in range(4)]
    async with anyio.create_task_group() as tg:
        for line in lines:
            tg.start_soon(_one_call, "add_customer_address", _address(line), "--episode", str(path))
    episode = _attach(path)
    seen = str(episode.call("get_customer_details", {"customer_id": CUSTOMER}).value)
    assert all(line in seen for line in lines), seen
    assert episode.calls == 5  # every call committed once, none lost, none twice
    assert Episode.restore(load_world("retail"), path.read_bytes()).calls == 5  # and written back


def test_processes_taking_turns_on_one_file_number_their_calls_and_draw_ids_in_turn(tmp_path: Path) -> None:
    """Two attachments of one file (two long-lived server processes) calling in turn: each call
    sees the other's writes, so call numbers, the clock and drawn ids go on from the other's
    (a process that kept its own last counters would number a call twice and draw an id again)."""
    path = tmp_path / "episode.db"
    first, second = _attach(path), _attach(path)
    assert first.call("get_customer_details", {"customer_id": CUSTOMER}).call_seq == 1
    added = second.call("add_customer_address", _address("3 Shared Way"))
    assert added.error is None and added.call_seq == 2
    again = first.call("add_customer_address", _address("4 Shared Way"))  # draws the next address id
    assert again.error is None and again.call_seq == 3, again.error
    assert first.call("get_customer_details", {"customer_id": CUSTOMER}).call_seq == 4
    saved = Episode.restore(load_world("retail"), path.read_bytes())
    assert [c.call_seq for c in saved.transcript()] == [1, 2, 3, 4] and saved.calls == 4
    assert saved.clock() == first.clock() and not saved.flags


def _serve(*args: str) -> Result:
    return CliRunner().invoke(main, ["serve", "retail", "--scale", "small", "--no-cache", *args])


def test_an_episode_of_another_seed_or_task_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "episode.db"
    _attach(path)
    before = path.read_bytes()
    other = _serve("--episode", str(path), "--seed", "3")
    assert other.exit_code == 1
    assert f"{path} holds another episode: seed 0 (asked: 3)" in other.output
    task = _serve("--episode", str(path), "--task", "cancel-pending-order")
    assert task.exit_code == 1 and "task None (asked: 'cancel-pending-order')" in task.output
    with pytest.raises(EpisodeFileError, match="seed 0 .asked: 3."):
        _attach(path, seed=3)
    assert path.read_bytes() == before  # a refused attach leaves the file alone

    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    refused = _serve("--episode", str(junk))
    assert refused.exit_code == 1 and "is not an mcpsim episode database" in refused.output


def test_episode_is_for_stdio_alone(tmp_path: Path) -> None:
    assert "are for stdio" in _serve("--http", "--episode", str(tmp_path / "e.db")).output
    snapshot = tmp_path / "s.db"
    snapshot.write_bytes(b"x")
    assert "exclude each other" in _serve("--episode", str(tmp_path / "e.db"), "--snapshot", str(snapshot)).output
    assert "--record with --episode" in _serve("--episode", str(tmp_path / "e.db"), "--record", str(tmp_path)).output
    assert not (tmp_path / "e.db").exists()
