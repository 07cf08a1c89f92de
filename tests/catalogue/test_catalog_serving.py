"""Many worlds, one server, over real HTTP (`mcpsim serve-worlds DIR`, a uvicorn subprocess): a
world loads on its first request with the token, its episodes answer the MCP SDK's client at
`/w/NAME/episodes/ID/mcp`, loading past `--max-worlds` evicts the least recently used, idle worlds
are evicted, and neither an unknown world nor a request without the token loads anything."""

from __future__ import annotations

import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache
from mcpsim.specs._arguments import Arguments
from mcpsim.specs._compiler import compile_spec
from tests.conftest import CLEAN_ENV, free_port, wait_until_healthy

pytestmark = pytest.mark.system

NAMES = ["hotel", "library", "it_helpdesk"]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, str, list[str]]]:
    # idle long enough that a loaded machine's gaps between one test's requests never evict
    yield from _serve(tmp_path_factory, idle=120)


@pytest.fixture(scope="module")
def quick_server(tmp_path_factory) -> Iterator[tuple[str, str, list[str]]]:
    # idle longer than loading a world takes (its sandbox process first: a few seconds on a busy machine)
    yield from _serve(tmp_path_factory, idle=20)


def _serve(tmp_path_factory, idle: float) -> Iterator[tuple[str, str, list[str]]]:
    folder = tmp_path_factory.mktemp("worlds")
    for name in NAMES:  # no generated tasks: loading a world is then only compiling it
        spec = expand(blueprints()[name], 1, name=name).model_copy(update={"generated_tasks": 0})
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(spec.model_dump(mode="json")))
    token, port = secrets.token_hex(16), free_port()
    log = folder / "server.log"
    argv = [sys.executable, "-m", "mcpsim", "serve-worlds", str(folder), "--port", str(port), "--token", token]
    argv += ["--max-worlds", "2", "--world-idle", str(idle), "--no-cache"]
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, env=CLEAN_ENV, stdout=subprocess.DEVNULL, stderr=err)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, proc, log)
            yield url, token, sorted(NAMES)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def _worlds(url: str, token: str) -> dict:
    answer = httpx.get(f"{url}/worlds", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _create(url: str, token: str, world: str) -> httpx.Response:
    body = {"world": world, "seed": 0, "scale": "small"}
    return httpx.post(f"{url}/w/{world}/episodes", json=body, headers={"Authorization": f"Bearer {token}"})


async def _call(mcp_url: str) -> tuple[list[str], dict]:
    async with (
        create_mcp_http_client() as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,
    ):
        tools = [t.name for t in (await client.list_tools()).tools]
        found = await client.call_tool(next(t for t in tools if t.startswith("list_")), {"limit": 2})
        return tools, found.structured_content or {}


def test_nothing_is_loaded_until_a_world_is_asked_for_with_the_token(server):
    url, token, names = server
    listed = _worlds(url, token)
    assert listed["worlds"] == names and listed["loaded"] == [] and listed["max_loaded"] == 2
    assert httpx.get(f"{url}/worlds").status_code == 401
    assert httpx.get(f"{url}/health").json()["worlds"] == 3
    unknown = _create(url, token, "atlantis")
    assert unknown.status_code == 404 and "unknown world 'atlantis'" in unknown.json()["error"]
    anonymous = httpx.post(f"{url}/w/hotel/episodes", json={"world": "hotel"})
    assert anonymous.status_code == 404 and "loading takes the token" in anonymous.json()["error"]
    assert _worlds(url, token)["loaded"] == []


def test_a_world_loads_on_its_first_episode_and_serves_the_sdk_client(server):
    url, token, _ = server
    created = _create(url, token, "hotel")
    assert created.status_code == 201, created.text
    mcp_url = created.json()["mcp_url"]
    assert mcp_url.startswith(f"{url}/w/hotel/episodes/") and mcp_url.endswith("/mcp")
    tools, page = anyio.run(_call, mcp_url)
    assert len(tools) >= 20
    assert page["total"] >= 1 and len(page["items"]) <= 2
    assert "hotel" in _worlds(url, token)["loaded"]
    episode = created.json()["id"]
    info = httpx.get(f"{url}/w/hotel/episodes/{episode}", headers={"Authorization": f"Bearer {token}"})
    assert info.status_code == 200 and info.json()["calls"] >= 1
    assert httpx.get(f"{url}/w/hotel/episodes/{episode}").status_code == 401  # the world's own control plane


async def _offered(mcp_url: str, distractor: str, own: str) -> tuple[list[str], bool, bool]:
    async with (
        create_mcp_http_client() as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,
    ):
        shown = [t.name for t in (await client.list_tools()).tools]
        refused = await client.call_tool(distractor, {})
        answered = await client.call_tool(own, {"limit": 1})
        return shown, refused.is_error, answered.is_error


def test_an_episode_offers_a_subset_plus_distractors_in_a_stable_order(server):
    url, token, _ = server
    first = _create(url, token, "library")
    assert first.status_code == 201
    full, _ = anyio.run(_call, first.json()["mcp_url"])
    only = [t for t in full if t.startswith("list_")][:2] + [t for t in full if t.startswith("get_")][:1]
    offer = {"only": only, "distractors": 5, "seed": 7}
    body = {"world": "library", "seed": 0, "scale": "small", "tools": offer}
    headers = {"Authorization": f"Bearer {token}"}
    created = [httpx.post(f"{url}/w/library/episodes", json=body, headers=headers) for _ in range(2)]
    assert [c.status_code for c in created] == [201, 201], created[0].text
    names = created[0].json()["tools"]
    assert names == created[1].json()["tools"] and len(names) == 8  # the same offer, the same order
    assert set(only) <= set(names) and len(set(names) - set(full)) == 5
    distractor = next(n for n in names if n not in full)
    shown, refused, answered = anyio.run(_offered, created[0].json()["mcp_url"], distractor, only[0])
    assert shown == names and refused and not answered
    other = httpx.post(f"{url}/w/library/episodes", json=body | {"tools": offer | {"seed": 8}}, headers=headers)
    assert other.status_code == 201 and other.json()["tools"] != names
    bad = httpx.post(f"{url}/w/library/episodes", json=body | {"tools": {"only": ["no_such_tool"]}}, headers=headers)
    assert bad.status_code == 422 and "has no tool no_such_tool" in bad.json()["error"]
    # without the token an offer is not even read: it would tell which tool names exist
    for guess in (only, ["no_such_tool"]):
        anonymous = httpx.post(f"{url}/w/library/episodes", json=body | {"tools": {"only": guess}})
        assert anonymous.status_code == 401, anonymous.text


def _a_write_that_succeeds(world_name: str) -> tuple[str, dict]:
    """A write tool of the served world and arguments with which it succeeds on a fresh episode
    (seed 0, small): found on the same spec, compiled here."""
    compiled = compile_spec(
        expand(blueprints()[world_name], 1, name=world_name).model_copy(update={"generated_tasks": 0})
    )
    arguments = Arguments(compiled, seed=0)
    episode = Episode.create(compiled.world, 0, "small", templates=TemplateCache(None))
    try:
        for action in (a for a in compiled.spec.actions if not a.read_only):
            for raw in arguments.candidates(action, episode)[:40]:
                args = {k: v for k, v in arguments.resolved(action, raw, episode).items() if v is not None}
                trial = episode.fork(id="probe")
                try:
                    result = trial.call(action.name, args)
                finally:
                    trial.close()
                if not result.is_error and result.changes:
                    return action.name, args
    finally:
        episode.close()
    raise AssertionError(f"no write of {world_name} succeeds")


async def _call_one(mcp_url: str, tool: str, args: dict) -> tuple[bool, str]:
    async with (
        create_mcp_http_client() as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,
    ):
        result = await client.call_tool(tool, args)
        return result.is_error, " ".join(getattr(block, "text", "") for block in result.content)


def test_a_call_to_a_tool_the_offer_hides_is_refused_and_changes_nothing(server):
    """The offer is enforced, not only shown: a world tool left out of `only` answers a business
    error, is recorded in the transcript as refused and leaves the state as it was, while the
    same call on an episode without an offer writes."""
    url, token, _ = server
    headers = {"Authorization": f"Bearer {token}"}
    tool, args = _a_write_that_succeeds("hotel")
    plain = _create(url, token, "hotel").json()
    offer = {"only": [t for t in _tools_of("hotel") if t != tool and t.startswith("get_")][:2], "distractors": 2}
    body = {"world": "hotel", "seed": 0, "scale": "small", "tools": offer}
    offered = httpx.post(f"{url}/w/hotel/episodes", json=body, headers=headers).json()
    assert tool not in offered["tools"]

    def state(episode: dict) -> str:
        answer = httpx.get(f"{url}/w/hotel/episodes/{episode['id']}/state", headers=headers)
        assert answer.status_code == 200, answer.text
        return answer.json()["state_hash"]

    before = state(offered)
    assert before == state(plain)  # the same seed and scale: the same start
    failed, text = anyio.run(_call_one, offered["mcp_url"], tool, args)
    assert failed and text == f"Tool {tool!r} is not offered in this episode; nothing was done.", text
    assert state(offered) == before
    info = httpx.get(f"{url}/w/hotel/episodes/{offered['id']}", headers=headers).json()
    assert info["calls"] == 1 and info["calls_failed"] == 1  # in the transcript, as refused
    distractor = next(n for n in offered["tools"] if n not in _tools_of("hotel"))
    failed, text = anyio.run(_call_one, offered["mcp_url"], distractor, {})
    assert failed and "is not offered in this episode" in text and state(offered) == before
    failed, _ = anyio.run(_call_one, plain["mcp_url"], tool, args)  # without an offer the same call writes
    assert not failed and state(plain) != before


def _offered_hotel(server: tuple[str, str, list[str]], distractors: int) -> tuple[str, dict, str, dict, dict, dict]:
    """A hotel episode offered two of its get_ tools plus `distractors`, and a write that succeeds
    on a fresh hotel episode but is not offered: (url, headers, tool, args, offer, the episode)."""
    url, token, _ = server
    headers = {"Authorization": f"Bearer {token}"}
    tool, args = _a_write_that_succeeds("hotel")
    offer = {
        "only": [t for t in _tools_of("hotel") if t != tool and t.startswith("get_")][:2],
        "distractors": distractors,
    }
    body = {"world": "hotel", "seed": 0, "scale": "small", "tools": offer}
    created = httpx.post(f"{url}/w/hotel/episodes", json=body, headers=headers)
    assert created.status_code == 201, created.text
    return url, headers, tool, args, offer, created.json()


def test_a_fork_of_an_offered_episode_keeps_the_offer(server):
    """Forking per rollout is the usual trainer pattern: the fork lists the same tools and refuses
    the hidden ones, like its parent."""
    url, headers, tool, args, _, parent = _offered_hotel(server, distractors=1)
    forked = httpx.post(f"{url}/w/hotel/episodes/{parent['id']}/fork", headers=headers)
    assert forked.status_code == 201, forked.text
    child = forked.json()
    assert child["id"] != parent["id"]
    before = httpx.get(f"{url}/w/hotel/episodes/{child['id']}/state", headers=headers).json()["state_hash"]
    failed, text = anyio.run(_call_one, child["mcp_url"], tool, args)
    assert failed and "is not offered in this episode" in text, text
    after = httpx.get(f"{url}/w/hotel/episodes/{child['id']}/state", headers=headers).json()["state_hash"]
    assert after == before


def test_concurrent_forks_and_forks_of_forks_all_keep_the_offer(server):
    """A trainer forks one offered episode for many rollouts at once: every child, and a child's
    own fork, lists exactly the parent's offered tools in the parent's order and refuses a hidden
    tool, whatever order the forks finish in."""
    url, headers, tool, _, offer, parent = _offered_hotel(server, distractors=2)

    async def fork_many(source: str, n: int) -> list[httpx.Response]:
        async with httpx.AsyncClient(headers=headers, timeout=120) as http:
            answers: list[httpx.Response] = []

            async def one() -> None:
                answers.append(await http.post(f"{url}/w/hotel/episodes/{source}/fork"))

            async with anyio.create_task_group() as group:
                for _ in range(n):
                    group.start_soon(one)
            return answers

    children = anyio.run(fork_many, parent["id"], 8)
    assert [c.status_code for c in children] == [201] * 8, [c.text for c in children]
    grandchild = anyio.run(fork_many, children[0].json()["id"], 1)[0]
    assert grandchild.status_code == 201, grandchild.text
    episodes = [c.json() for c in children] + [grandchild.json()]
    assert len({e["id"] for e in episodes} | {parent["id"]}) == 10
    for episode in episodes:
        shown, refused, _ = anyio.run(_offered, episode["mcp_url"], tool, offer["only"][0])
        assert shown == parent["tools"] and refused, (episode["id"], shown)


def test_a_parent_deleted_while_its_fork_is_made_leaves_the_child_its_offer(tmp_path_factory, monkeypatch):
    """The parent's offer is taken before the fork is made: a trainer that deletes the parent, and
    creates another offered episode (which forgets deleted episodes' offers), while the fork is
    under way still gets a child that lists only the offered tools. In process (the fork is held
    at the point the race needs by wrapping the server's response capture; the server is real)."""
    from mcpsim.catalogue._hosting import spec_world_loader
    from mcpsim.serve import _worlds as worlds
    from mcpsim.serve._app import serve_in_thread
    from mcpsim.serve._worlds import WorldHost

    folder = tmp_path_factory.mktemp("race")
    spec = expand(blueprints()["hotel"], 1, name="hotel").model_copy(update={"generated_tasks": 0})
    (folder / "hotel.yaml").write_text(yaml.safe_dump(spec.model_dump(mode="json")))
    made, release = threading.Event(), threading.Event()
    captured = worlds._captured

    async def held(app, scope, receive):  # the fork is made, its answer not yet handled
        answer = await captured(app, scope, receive)
        if scope["path"].endswith("/fork"):
            made.set()
            with anyio.fail_after(120):
                while not release.is_set():
                    await anyio.sleep(0.01)
        return answer

    monkeypatch.setattr(worlds, "_captured", held)
    names, load = spec_world_loader(folder)
    token = secrets.token_hex(16)
    host = WorldHost(names, load, templates=TemplateCache(None), token=token)
    with serve_in_thread(host.app) as url:
        url, headers, tool, _, offer, parent = _offered_hotel((url, token, names), distractors=0)
        forks: list[httpx.Response] = []
        forking = threading.Thread(
            target=lambda: forks.append(httpx.post(f"{url}/w/hotel/episodes/{parent['id']}/fork", headers=headers))
        )
        forking.start()
        try:
            assert made.wait(120), "the fork was never made"
            gone = httpx.delete(f"{url}/w/hotel/episodes/{parent['id']}", headers=headers)
            assert gone.status_code in (200, 204), gone.text
            body = {"world": "hotel", "seed": 1, "scale": "small", "tools": offer}
            assert httpx.post(f"{url}/w/hotel/episodes", json=body, headers=headers).status_code == 201
            assert parent["id"] not in host.loaded["hotel"].offers  # the parent's offer is forgotten
        finally:
            release.set()
            forking.join(120)
        [child] = forks
        assert child.status_code == 201, child.text
        shown, refused, _ = anyio.run(_offered, child.json()["mcp_url"], tool, offer["only"][0])
        assert shown == parent["tools"] and refused, shown


def test_a_restored_snapshot_of_an_offered_episode_keeps_the_offer(server):
    """A trainer snapshots an offered episode and restores it to branch a rollout: the restored
    episode lists the offered tools and refuses the hidden ones, like the one it was taken from;
    a snapshot of an episode without an offer restores with every tool (bytes equal to an offered
    episode's snapshot restore with its offer: the server cannot tell them apart, and errs on the
    side of fewer tools)."""
    url, headers, tool, args, _, parent = _offered_hotel(server, distractors=1)
    snapshot = httpx.get(f"{url}/w/hotel/episodes/{parent['id']}/snapshot", headers=headers)
    assert snapshot.status_code == 200, snapshot.text
    upload = headers | {"Content-Type": "application/vnd.sqlite3"}
    restored = httpx.post(f"{url}/w/hotel/episodes/restore", content=snapshot.content, headers=upload)
    assert restored.status_code == 201, restored.text
    shown, refused, _ = anyio.run(_offered, restored.json()["mcp_url"], tool, parent["tools"][0])
    assert shown == parent["tools"] and refused
    plain = _create(*server[:2], "hotel").json()
    anyio.run(_call, plain["mcp_url"])  # a read: its transcript, so not the offered one's bytes
    bare = httpx.get(f"{url}/w/hotel/episodes/{plain['id']}/snapshot", headers=headers)
    again = httpx.post(f"{url}/w/hotel/episodes/restore", content=bare.content, headers=upload)
    assert again.status_code == 201, again.text
    failed, text = anyio.run(_call_one, again.json()["mcp_url"], tool, args)
    assert not failed, text  # no offer: the write goes through


def _tools_of(world_name: str) -> list[str]:
    return sorted(compile_spec(expand(blueprints()[world_name], 1, name=world_name)).world.tools)


def test_every_route_checks_the_host_header(server):
    url, token, _ = server
    headers = {"Authorization": f"Bearer {token}", "Host": "evil.example"}
    for path in ("/health", "/worlds"):
        assert httpx.get(f"{url}{path}", headers=headers).status_code == 403
    assert httpx.post(f"{url}/w/hotel/episodes", json={"world": "hotel"}, headers=headers).status_code == 403


def test_loading_past_the_bound_evicts_the_least_recently_used_and_idle_worlds_go(quick_server):
    url, token, _ = quick_server
    for world in ("hotel", "library", "it_helpdesk"):
        assert _create(url, token, world).status_code == 201
    listed = _worlds(url, token)
    assert listed["loaded"] == ["it_helpdesk", "library"] and listed["evictions"] >= 1
    deadline = time.monotonic() + 240  # idle after 20 s; the reaper looks every 5 s
    while _worlds(url, token)["loaded"] and time.monotonic() < deadline:
        time.sleep(0.5)
    listed = _worlds(url, token)
    assert listed["loaded"] == [] and listed["evictions"] >= 3
    again = _create(url, token, "hotel")  # a world evicted loads again
    assert again.status_code == 201 and _worlds(url, token)["loads"] == listed["loads"] + 1


def test_serve_worlds_refuses_an_empty_folder(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "mcpsim", "serve-worlds", str(tmp_path), "--no-auth"],
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2 and "holds no spec file" in done.stderr
