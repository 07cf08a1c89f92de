"""Trustless restore: a snapshot is signed by the server that made it; an upload is checked
(signature, digest, then exactly the world's schema) off the event loop and within a size limit,
so a planted trigger, a slow view, a relabelled task or an edited freeze never comes back."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from mcpsim.engine import _snapshots as snapshots
from mcpsim.engine import _store as store
from mcpsim.engine._episode import Episode
from mcpsim.engine._snapshots import SnapshotError, load_untrusted, sign, split
from tests.support.verifier_fixtures import ledger_tasks

pytestmark = pytest.mark.anyio

KEY = b"k" * 32
SQLITE = {"content-type": "application/vnd.sqlite3"}


@pytest.fixture
def live(serve_http, ledger, templates):
    return serve_http([ledger], tasks={"ledger": ledger_tasks(ledger, templates)}, snapshot_key=KEY)


@pytest.fixture
def episode(ledger, templates) -> Episode:
    ep = Episode.create(ledger, seed=1, scale="small", templates=templates)
    ep.call("open_account", {"owner": "Ada"})
    return ep


def edited(data: bytes, *statements: str, trailer: bool = True) -> bytes:
    """The snapshot's database after `statements`, with its original trailer put back."""
    db, claims, mac = split(data)
    conn = store.connect(db)
    for sql in statements:
        conn.execute(sql)
    out = conn.serialize()
    conn.close()
    if not trailer:
        return out
    assert claims is not None and mac is not None
    return out + claims + len(claims).to_bytes(4, "big") + mac + snapshots.MAGIC


def resigned(data: bytes, *statements: str) -> bytes:
    """As if the key had leaked: the tampered database signed with the server's own key."""
    return sign(edited(data, *statements, trailer=False), KEY)


# -- what the server signed restores ------------------------------------------------------------


async def test_a_signed_snapshot_restores_over_http_with_its_task_freeze_and_state(live, ledger):
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        await http.post(f"/episodes/{ep['id']}/end")
        state = (await http.get(f"/episodes/{ep['id']}/state")).json()["state_hash"]
        snap = (await http.get(f"/episodes/{ep['id']}/snapshot")).content
        assert split(snap)[1] is not None  # it carries its signature
        r = await http.post("/episodes/restore", content=snap, headers=SQLITE)
        assert r.status_code == 201, r.text
        back = r.json()
        assert (back["task"], back["ended"], back["world_version"]) == ("pay-and-open", True, ledger.version)
        assert (await http.get(f"/episodes/{back['id']}/state")).json()["state_hash"] == state
        with anyio.fail_after(20):
            async with Client(back["mcp_url"]) as client:
                late = await client.call_tool("open_account", {"owner": "After The End"})
        assert late.is_error and "ended" in late.content[0].text  # the freeze came back too
    # A signed snapshot is still a plain SQLite file for trusted tools (mcpsim verify --snapshot).
    assert Episode.restore(ledger, snap).task_id == "pay-and-open"


def test_load_untrusted_keeps_flags_and_rows(episode, ledger):
    episode.call("close_account_buggy", {"account_id": episode.tables()["account"][0]["id"]})
    assert episode.flagged
    restored = load_untrusted(ledger, sign(episode.snapshot(), KEY), KEY)
    assert restored.flags == episode.flags and restored.state_hash() == episode.state_hash()
    lookup = load_untrusted(lambda name: {"ledger": ledger}[name], sign(episode.snapshot(), KEY), KEY)
    assert lookup.world is ledger


async def test_a_fork_of_a_graded_frozen_episode_stays_frozen(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        await http.post(f"/episodes/{ep['id']}/verify", json={"answer": "done"})
        fork = (await http.post(f"/episodes/{ep['id']}/fork")).json()
        assert fork["ended"] is True and fork["task"] == "pay-and-open"
        with anyio.fail_after(20):
            async with Client(fork["mcp_url"]) as client:
                late = await client.call_tool("open_account", {"owner": "Sneaky"})
        assert late.is_error and "ended" in late.content[0].text


# -- what is refused, and why ---------------------------------------------------------------------


async def test_an_unsigned_database_is_refused(live, episode):
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post("/episodes/restore", content=episode.snapshot(), headers=SQLITE)
    assert r.status_code == 422 and "not a signed mcpsim snapshot" in r.json()["error"]
    assert len(live.manager) == 0


async def test_a_relabelled_task_is_refused(live, ledger):
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        snap = (await http.get(f"/episodes/{ep['id']}/snapshot")).content
        # In the database: its digest no longer matches.
        in_db = edited(snap, "UPDATE _mcpsim_meta SET value = '\"refuse-overdraft\"' WHERE key = 'task'")
        r = await http.post("/episodes/restore", content=in_db, headers=SQLITE)
        assert r.status_code == 422, r.text
        assert "edited after it was signed" in r.json()["error"] and "pay-and-open" in r.json()["error"]
        # In the signed labels: the HMAC no longer matches.
        db, claims, mac = split(snap)
        relabelled = claims.replace(b'"task":"pay-and-open"', b'"task":"refuse-overdraft"')
        assert relabelled != claims
        forged = db + relabelled + len(relabelled).to_bytes(4, "big") + mac + snapshots.MAGIC
        r = await http.post("/episodes/restore", content=forged, headers=SQLITE)
        assert r.status_code == 422 and "signature does not match" in r.json()["error"]
    assert len(live.manager) == 1


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE _mcpsim_meta SET value = 'false' WHERE key = 'ended'",  # thaw a frozen episode
        "UPDATE _mcpsim_meta SET value = '[]' WHERE key = 'flags'",
        "CREATE TRIGGER planted AFTER INSERT ON account BEGIN DELETE FROM account; END",
        "UPDATE account SET balance_cents = 10 WHERE rowid = 1",
    ],
)
async def test_an_edited_snapshot_is_refused(live, episode, statement):
    episode.call("close_account_buggy", {"account_id": episode.tables()["account"][0]["id"]})
    episode.end()
    assert episode.flagged
    snap = sign(episode.snapshot(), KEY)
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post("/episodes/restore", content=edited(snap, statement), headers=SQLITE)
    assert r.status_code == 422 and "edited after it was signed" in r.json()["error"], r.text


async def test_a_snapshot_signed_by_another_key_is_refused(live, episode):
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post("/episodes/restore", content=sign(episode.snapshot(), b"x" * 32), headers=SQLITE)
    assert r.status_code == 422 and "another key" in r.json()["error"]


@pytest.mark.parametrize(
    ("statement", "fragment"),
    [
        ("CREATE TRIGGER planted AFTER INSERT ON account BEGIN DELETE FROM account; END", "trigger planted"),
        (
            (
                "CREATE VIEW _mcpsim_slow AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                "SELECT x FROM c"
            ),
            "view _mcpsim_slow",
        ),
        ("CREATE TABLE _mcpsim_extra (x)", "table _mcpsim_extra"),
        ("DROP TRIGGER _mcpsim_account_update", "missing (or changed): trigger _mcpsim_account_update"),
        ("CREATE INDEX sneaky ON account(owner)", "index sneaky"),
        ("ALTER TABLE account ADD COLUMN note TEXT", "table account"),
    ],
)
def test_even_with_the_key_only_the_worlds_exact_schema_restores(episode, ledger, statement, fragment):
    with pytest.raises(SnapshotError, match="schema is not world ledger's") as caught:
        load_untrusted(ledger, resigned(sign(episode.snapshot(), KEY), statement), KEY)
    assert fragment in str(caught.value)


def test_a_restore_rebuilds_the_database_from_the_servers_own_ddl(episode, ledger):
    """Re-stamping: only the upload's rows come back, in a database the server built itself; header
    fields and the leftovers of deleted rows in free pages do not (even under a leaked key)."""
    leftover = "LEFTOVER-" + "x" * 300
    snap = resigned(
        sign(episode.snapshot(), KEY),
        "PRAGMA secure_delete = 0",  # as a database edited elsewhere would be
        "PRAGMA user_version = 77",
        "PRAGMA application_id = 1234",
        f"INSERT INTO _mcpsim_ids VALUES (999, 'junk', '{leftover}')",
        "DELETE FROM _mcpsim_ids WHERE call_seq = 999",
    )
    assert leftover.encode() in split(snap)[0]  # the upload carries it in a free page
    restored = load_untrusted(ledger, snap, KEY)
    db = restored.snapshot()
    assert leftover.encode() not in db
    assert restored.conn.execute("PRAGMA user_version").fetchone()[0] == 0
    assert restored.conn.execute("PRAGMA application_id").fetchone()[0] == 0
    assert snapshots._schema(restored.conn) == snapshots.reference_schema(ledger)
    # the rows, their rowids, the change log and the transcript are the upload's
    assert restored.state_hash() == episode.state_hash()
    assert store.read_changes(restored.conn) == store.read_changes(episode.conn)
    assert store.read_calls(restored.conn) == store.read_calls(episode.conn)
    assert store.read_meta(restored.conn) == store.read_meta(episode.conn)
    # and the server's own triggers log the next call
    before = len(store.read_changes(restored.conn))
    assert not restored.call("open_account", {"owner": "Grace"}).is_error
    assert len(store.read_changes(restored.conn)) > before


def test_even_with_the_key_another_world_version_is_refused(episode, ledger):
    snap = resigned(episode.snapshot(), "UPDATE _mcpsim_meta SET value = '\"0ld\"' WHERE key = 'version'")
    with pytest.raises(SnapshotError, match=f"version 0ld; this server runs version {ledger.version}"):
        load_untrusted(ledger, snap, KEY)


def test_every_real_worlds_snapshot_passes_its_schema_check(templates):
    from mcpsim.world._registry import load_world, world_names

    for name in world_names():
        world = load_world(name)
        ep = Episode.create(world, 0, "small", templates=templates)
        assert load_untrusted(world, sign(ep.snapshot(), KEY), KEY).state_hash() == ep.state_hash()


# -- size and the event loop ----------------------------------------------------------------------


async def test_an_upload_past_the_size_limit_gets_413(serve_http, ledger, episode):
    live = serve_http([ledger], snapshot_key=KEY)
    from mcpsim.serve._control import ControlPlane

    limit = ControlPlane.max_snapshot_bytes
    ControlPlane.max_snapshot_bytes = 64 * 1024
    try:
        async with httpx.AsyncClient(base_url=live.url) as http:

            async def chunks():  # streamed, no Content-Length
                for _ in range(100):
                    yield b"\0" * 4096

            r = await http.post("/episodes/restore", content=chunks(), headers=SQLITE)
            assert r.status_code == 413 and "larger than 65536" in r.json()["error"]
            r = await http.post("/episodes/restore", content=b"\0" * 70_000, headers=SQLITE)
            assert r.status_code == 413
    finally:
        ControlPlane.max_snapshot_bytes = limit


async def test_a_restore_is_checked_off_the_event_loop(live, episode, monkeypatch):
    from mcpsim.serve import _control as control

    started, release = threading.Event(), threading.Event()
    real = control.load_untrusted

    def slow(*args, **kwargs):
        started.set()
        release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(control, "load_untrusted", slow)
    snap = sign(episode.snapshot(), KEY)
    answers: list[int] = []
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http, anyio.create_task_group() as tg:

        async def restore() -> None:
            answers.append((await http.post("/episodes/restore", content=snap, headers=SQLITE)).status_code)

        tg.start_soon(restore)
        with anyio.fail_after(20):  # on the event loop, /health would wait the whole minute
            while not started.is_set():
                await anyio.sleep(0.01)
            health = await http.get("/health")  # answers while the upload is being checked
        assert health.status_code == 200
        release.set()
    assert answers == [201]


# -- the key --------------------------------------------------------------------------------------


def test_the_key_comes_from_the_option_the_environment_or_the_process(monkeypatch):
    monkeypatch.delenv("MCPSIM_SNAPSHOT_KEY", raising=False)
    assert snapshots.snapshot_key() == snapshots.process_key() == snapshots.snapshot_key()
    monkeypatch.setenv("MCPSIM_SNAPSHOT_KEY", "e" * 20)
    assert snapshots.snapshot_key() == b"e" * 20
    assert snapshots.snapshot_key("o" * 16) == b"o" * 16
    with pytest.raises(ValueError, match="at least 16"):
        snapshots.snapshot_key("short")


def test_the_loopback_runner_keeps_one_key_per_run_folder(tmp_path, monkeypatch):
    from mcpsim.cli._running import _loopback_snapshot_key

    monkeypatch.delenv("MCPSIM_SNAPSHOT_KEY", raising=False)
    first = _loopback_snapshot_key(tmp_path / "run")
    assert first == _loopback_snapshot_key(tmp_path / "run") and len(first) >= 16
    assert os.stat(tmp_path / "run" / ".snapshot-key").st_mode & 0o077 == 0
    assert first != _loopback_snapshot_key(tmp_path / "other")


def test_the_signature_covers_the_labels(episode):
    _, claims, _ = split(sign(episode.snapshot(), KEY))
    labels = json.loads(claims)
    assert {"world", "world_version", "task", "ended", "flags", "sha256"} <= set(labels)
    assert labels["world"] == "ledger" and labels["ended"] is False
    with pytest.raises(sqlite3.DatabaseError):
        store.connect(b"not a database" * 100).execute("SELECT 1 FROM sqlite_master").fetchall()


# -- the runner's --keep-first / --resume over HTTP snapshots and restores ------------------------


async def test_keep_first_and_resume_over_http_restore_what_the_server_signed(serve_http, tmp_path):
    from mcpsim.runner._agents import OracleAgent
    from mcpsim.runner._backends import HttpBackend
    from mcpsim.runner._run import RunConfig, run_episodes
    from mcpsim.runner._users import ScriptedUser
    from mcpsim.tasks import load_tasks
    from mcpsim.world._registry import load_world
    from tests.runner.test_runner import GatedOracle, lines

    world, task_set = load_world("retail"), load_tasks("retail")
    short = [t for t in task_set.tasks if len(t.gold) <= 2][:1]
    long = [t for t in task_set.tasks if len(t.gold) >= 3 and any(world.tools[a.tool].writes for a in t.gold)][:2]
    live = serve_http([world], tasks={"retail": task_set}, snapshot_key=KEY, verdict_detail="full")
    backend = HttpBackend(live.url)
    release = anyio.Event()

    def progress(_t) -> None:
        release.set()

    try:
        with anyio.fail_after(120):
            first = await run_episodes(
                RunConfig(world="retail", tasks=short + long, out=tmp_path, concurrency=3, keep_first=1),
                backend,
                lambda: GatedOracle(release),
                ScriptedUser,
                on_progress=progress,
            )
        assert (first.ran, first.cancelled) == (1, 2)
        snapshots_written = [t.snapshot for t in lines(tmp_path) if t.status == "cancelled"]
        assert all(split(Path(p).read_bytes())[1] is not None for p in snapshots_written)  # signed
        with anyio.fail_after(120):
            resumed = await run_episodes(
                RunConfig(world="retail", tasks=short + long, out=tmp_path, concurrency=3, resume=True),
                backend,
                OracleAgent,
                ScriptedUser,
            )
    finally:
        await backend.aclose()
    assert (resumed.ran, resumed.skipped) == (2, 1)
    done = [t for t in lines(tmp_path) if t.status == "completed"]
    assert len(done) == 3 and all(t.reward == 1.0 for t in done)


def test_restamping_keeps_an_autoincrement_tables_counter():
    """Copying rows into an AUTOINCREMENT table writes sqlite_sequence; the upload's counter (past
    deleted rows) must win, not a second row beside it."""
    from sqlalchemy.orm import registry
    from sqlmodel import Field as Column
    from sqlmodel import SQLModel

    class Base(SQLModel, registry=registry()):
        pass

    class Note(Base, table=True):
        __table_args__ = {"sqlite_autoincrement": True}
        id: int | None = Column(default=None, primary_key=True)
        text: str

    from mcpsim.world import World

    world = World(
        "notes", title="Notes", description="test", metadata=Base.metadata, policy="-", scales={"default": {}}
    )
    from mcpsim.engine._templates import engine_for

    upload = store.connect()  # an empty database of the world
    world.metadata.create_all(engine_for(upload))
    store.install_bookkeeping(upload, world.metadata, None)
    upload.execute("DROP TRIGGER IF EXISTS _mcpsim_note_insert")
    upload.execute("DROP TRIGGER IF EXISTS _mcpsim_note_delete")
    upload.executemany("INSERT INTO note (text) VALUES (?)", [(f"n{i}",) for i in range(10)])
    upload.execute("DELETE FROM note WHERE id > 5")  # the counter stays at 10
    rebuilt = snapshots.restamped(world, upload)
    assert rebuilt.execute("SELECT name, seq FROM sqlite_sequence").fetchall() == [("note", 10)]
    rebuilt.execute("DROP TRIGGER IF EXISTS _mcpsim_note_insert")
    rebuilt.execute("INSERT INTO note (text) VALUES ('next')")
    assert rebuilt.execute("SELECT max(id) FROM note").fetchone()[0] == 11
