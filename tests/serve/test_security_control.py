"""The control plane is closed: a token by default, Host and Origin checked on every route,
`mcp_url` from the configured public URL, final verdicts that tell a caller only what the
operator allows, and `/mcp` isolated per client (issue 11: "An agent can grade itself",
"Side channels")."""

from __future__ import annotations

import json
import re

import anyio
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from structlog.testing import capture_logs

from mcpsim.cli import main
from mcpsim.serve._access import HostOriginGuard, summarize_verdict
from mcpsim.serve._app import ServeConfig, build_app, serve_in_thread
from mcpsim.serve._host import EpisodeManager
from tests.conftest import MCP_INITIALIZE, free_port, spawn_retail_http, wait_until_healthy
from tests.support.verifier_fixtures import ledger_tasks

pytestmark = pytest.mark.anyio

ANSWER = "Sent $20.00; Zoe is set up."
SUMMARY_KEYS = {"detail", "task_id", "episode_id", "passed", "reward", "partial_reward", "failure", "checks"}
# each check's 0 or 1 by its summary name (what `checks` already shows), left out when there are none
SUMMARY_KEYS_OPTIONAL = {"components", "guards"}


def summary_keys(summary) -> bool:
    return SUMMARY_KEYS <= set(summary) <= SUMMARY_KEYS | SUMMARY_KEYS_OPTIONAL


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def tasks(ledger, templates):
    return {"ledger": ledger_tasks(ledger, templates)}


async def drive_gold(mcp_url: str, task) -> None:
    with anyio.fail_after(20):
        async with Client(mcp_url) as client:
            for action in task.gold:
                assert not (await client.call_tool(action.tool, action.args)).is_error


# -- 1. closed by default ------------------------------------------------------------------


async def test_without_a_token_or_no_auth_a_token_is_generated_printed_once_and_required(ledger, templates, capfd):
    manager = EpisodeManager(templates, max_episodes=5, ttl_seconds=None)
    app = build_app([ledger], manager)
    err = capfd.readouterr().err
    token = app.state.token
    assert token and len(token) >= 40 and err.count(token) == 1  # 256 random bits, printed once
    routes = [
        ("GET", "/worlds"),
        ("GET", "/worlds/ledger/tasks"),
        ("GET", "/episodes"),
        ("POST", "/episodes"),
        ("POST", "/episodes/restore"),
        ("GET", "/episodes/x"),
        ("DELETE", "/episodes/x"),
        ("GET", "/episodes/x/state"),
        ("GET", "/episodes/x/changes"),
        ("POST", "/episodes/x/end"),
        ("POST", "/episodes/x/fork"),
        ("POST", "/episodes/x/verify"),
        ("GET", "/episodes/x/snapshot"),
        ("GET", "/episodes/x/trajectory"),
    ]
    with serve_in_thread(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            for method, path in routes:
                r = await http.request(method, path)
                assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", (method, path)
                assert "bearer token" in r.json()["error"]
            assert (await http.get("/health")).status_code == 200  # open: probes need no secret
            r = await http.post("/episodes", json={"world": "ledger", "scale": "small"}, headers=bearer(token))
            assert r.status_code == 201
            assert len(manager) == 1
    assert token not in capfd.readouterr().err  # printed once, never again


def test_no_auth_opens_the_control_plane_with_a_warning_and_excludes_a_token(ledger, templates):
    manager = EpisodeManager(templates, max_episodes=5, ttl_seconds=None)
    with capture_logs() as logs:
        app = build_app([ledger], manager, no_auth=True)
    assert app.state.token is None
    assert any(e["log_level"] == "warning" and "--no-auth" in e["event"] for e in logs)
    with pytest.raises(ValueError, match="not both"):
        build_app([ledger], manager, token="t", no_auth=True)
    with pytest.raises(ValueError, match="non-empty"):
        build_app([ledger], manager, token="two words")
    config = ServeConfig.from_env(
        {
            "MCPSIM_NO_AUTH": "1",
            "MCPSIM_PUBLIC_URL": "https://sim.example",
            "MCPSIM_VERDICT_DETAIL": "summary",
            "MCPSIM_SHARED_DEFAULT": "true",
        }
    )
    assert (config.no_auth, config.public_url, config.verdict_detail, config.shared_default) == (
        True,
        "https://sim.example",
        "summary",
        True,
    )
    with pytest.raises(ValueError, match="MCPSIM_NO_AUTH"):
        ServeConfig.from_env({"MCPSIM_NO_AUTH": "maybe"})


def test_the_cli_refuses_a_token_together_with_no_auth():
    result = CliRunner().invoke(main, ["serve", "retail", "--http", "--token", "t", "--no-auth"])
    assert result.exit_code == 2 and "exclude each other" in result.output


@pytest.mark.system
def test_mcpsim_serve_http_generates_a_token_prints_it_and_builds_urls_from_the_public_url(tmp_path):
    port = free_port()
    log = tmp_path / "stderr.log"
    with log.open("wb") as err:
        proc = spawn_retail_http(port, err, "--public-url", f"http://sim.test:{port}/")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, proc, log)  # bounded to about 60 s; the token is printed before serving
        found = re.search(r"mcpsim: token (\S+)", log.read_text())
        assert found, log.read_text()
        token = found[1]
        assert httpx.post(f"{url}/episodes", json={"scale": "small"}, timeout=10).status_code == 401
        r = httpx.post(f"{url}/episodes", json={"scale": "small"}, headers=bearer(token), timeout=30)
        assert r.status_code == 201, r.text
        assert r.json()["mcp_url"] == f"http://sim.test:{port}/episodes/{r.json()['id']}/mcp"
        assert log.read_text().count(token) == 1
        assert f"serving retail on http://sim.test:{port}/mcp" in log.read_text()
        assert f"watch live episodes at http://sim.test:{port}/ui/ (it asks for the control-plane token)" in (
            log.read_text()
        )
    finally:
        proc.terminate()
        proc.wait(timeout=20)


# -- 2. Host and Origin on every route ------------------------------------------------------

EVERY_ROUTE = [
    ("GET", "/health"),
    ("GET", "/worlds"),
    ("GET", "/episodes"),
    ("POST", "/episodes"),
    ("POST", "/episodes/restore"),
    ("GET", "/episodes/ID"),
    ("DELETE", "/episodes/ID"),
    ("GET", "/episodes/ID/state"),
    ("GET", "/episodes/ID/changes"),
    ("POST", "/episodes/ID/end"),
    ("POST", "/episodes/ID/fork"),
    ("POST", "/episodes/ID/verify"),
    ("GET", "/episodes/ID/snapshot"),
    ("GET", "/episodes/ID/trajectory"),
    ("POST", "/episodes/ID/mcp"),
    ("POST", "/mcp"),
    ("GET", "/no/such/route"),
]


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example"},  # DNS rebinding: evil.example resolved to 127.0.0.1
        {"Host": "localhost:8000.evil.example"},  # the SDK's prefix match lets this through
        {"Host": "127.0.0.1.evil.example"},
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:80.evil.example"},
        {"Origin": "null"},
    ],
    ids=["host", "host-port-prefix", "host-name-prefix", "origin", "origin-port-prefix", "origin-null"],
)
async def test_a_dns_rebinding_request_gets_403_on_every_route_before_anything_runs(serve_http, ledger, tasks, headers):
    token = "s3cret"
    live = serve_http([ledger], default=ledger, tasks=tasks, token=token)
    async with httpx.AsyncClient(base_url=live.url, headers=bearer(token)) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        mcp_body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        for method, path in EVERY_ROUTE:
            r = await http.request(
                method, path.replace("ID", ep["id"]), headers=headers, json=mcp_body if path.endswith("mcp") else None
            )
            assert r.status_code == 403, (method, path, r.status_code, r.text)
            assert "DNS-rebinding" in r.json()["error"]
        # Nothing happened: the one episode is untouched and ungraded, no /mcp episode was made.
        info = (await http.get(f"/episodes/{ep['id']}")).json()
        assert info["ended"] is False and info["calls"] == 0 and len(live.manager) == 1


async def test_allowed_names_pass_and_an_explicit_list_replaces_the_loopback_defaults(serve_http, ledger):
    live = serve_http(
        [ledger],
        allowed_hosts=["sim.internal:*"],
        allowed_origins=["https://ui.example"],
        public_url="https://sim.example.org",
    )
    port = live.url.rsplit(":", 1)[1]
    async with httpx.AsyncClient(base_url=live.url) as http:
        for host, status in [
            (f"sim.internal:{port}", 200),
            ("SIM.Internal", 200),
            ("sim.example.org", 200),
            (f"127.0.0.1:{port}", 403),
            (f"localhost:{port}", 403),
            ("sim.internal:x", 403),
        ]:
            assert (await http.get("/health", headers={"Host": host})).status_code == status, host
        ok = {"Host": "sim.internal:1"}
        assert (await http.get("/health", headers=ok | {"Origin": "https://ui.example"})).status_code == 200
        assert (await http.get("/health", headers=ok | {"Origin": "https://sim.example.org"})).status_code == 200
        assert (await http.get("/health", headers=ok | {"Origin": "http://ui.example"})).status_code == 403


def test_port_wildcards_match_whole_ports_only_unlike_the_sdk_check():
    guard = HostOriginGuard(
        None,
        allowed_hosts=["localhost:*", "[::1]:*"],  # type: ignore[arg-type]
        allowed_origins=["http://localhost:*"],
    )
    assert guard.host_allowed("localhost:8000") and guard.host_allowed("localhost") and guard.host_allowed("[::1]:9")
    for bad in [
        "localhost:8000.evil.example",
        "localhost:80@evil",
        "localhost:",
        "localhost.evil",
        "[::1]x",
        "",
        None,
        "localhost:123456",
    ]:
        assert not guard.host_allowed(bad), bad
    assert guard.origin_allowed("http://localhost:3000") and guard.origin_allowed(None)
    assert not guard.origin_allowed("http://localhost:3000.evil.example")
    assert not guard.origin_allowed("https://localhost:3000")
    sdk = TransportSecurityMiddleware(
        TransportSecuritySettings(allowed_hosts=["localhost:*"], allowed_origins=["http://localhost:*"])
    )
    assert sdk._validate_host("localhost:8000.evil.example")  # why the SDK's check is not the one used
    with pytest.raises(ValueError, match="allowed host"):
        HostOriginGuard(None, allowed_hosts=["evil.example/x"])  # type: ignore[arg-type]


# -- 3. mcp_url from the public URL, never from the Host header ------------------------------


async def test_mcp_url_comes_from_the_public_url_not_the_host_header(serve_http, ledger):
    live = serve_http(
        [ledger], public_url="https://sim.example.org/bench/", allowed_hosts=["127.0.0.1:*", "alias.test"]
    )
    async with httpx.AsyncClient(base_url=live.url) as http:
        for host in (None, "alias.test"):
            r = await http.post(
                "/episodes", json={"world": "ledger", "scale": "small"}, headers={"Host": host} if host else {}
            )
            assert r.status_code == 201
            assert r.json()["mcp_url"] == f"https://sim.example.org/bench/episodes/{r.json()['id']}/mcp"


async def test_without_a_public_url_mcp_url_is_the_listening_socket_whatever_the_host_header(serve_http, ledger):
    live = serve_http([ledger])
    port = live.url.rsplit(":", 1)[1]
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post(
            "/episodes", json={"world": "ledger", "scale": "small"}, headers={"Host": f"localhost:{port}"}
        )
    assert r.json()["mcp_url"] == f"{live.url}/episodes/{r.json()['id']}/mcp"  # 127.0.0.1, not localhost


# -- 4. a verdict is final ------------------------------------------------------------------


async def test_a_second_verify_returns_the_first_verdict_whatever_the_new_answer(serve_http, ledger, tasks):
    live = serve_http([ledger], tasks=tasks, token="t")
    task = tasks["ledger"].get("pay-and-open")
    async with httpx.AsyncClient(base_url=live.url, headers=bearer("t")) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": task.id})).json()
        await drive_gold(ep["mcp_url"], task)
        first = await http.post(f"/episodes/{ep['id']}/verify", json={"answer": "I did nothing."})
        assert first.status_code == 200 and first.json()["passed"] is False  # the answer misses its facts
        for _ in range(2):
            again = await http.post(f"/episodes/{ep['id']}/verify", json={"answer": ANSWER})
            assert again.status_code == 200 and again.json() == first.json()
        # Concurrent verifies of a fresh episode all return one verdict.
        other = (await http.post("/episodes", json={"world": "ledger", "task": task.id})).json()
        await drive_gold(other["mcp_url"], task)
        answers = ["I did nothing.", ANSWER, ANSWER, "I did nothing."]
        got: list[dict] = []

        async def verify(answer: str) -> None:
            got.append((await http.post(f"/episodes/{other['id']}/verify", json={"answer": answer})).json())

        async with anyio.create_task_group() as tg:
            for answer in answers:
                tg.start_soon(verify, answer)
        assert all(v == got[0] for v in got) and got[0]["answer"] in answers


# -- 5. what a verdict tells its caller ------------------------------------------------------


def test_a_summary_keeps_outcome_and_check_names_and_nothing_expected():
    full = {
        "task_id": "t",
        "world": "w",
        "world_version": "1",
        "episode_id": "e",
        "passed": False,
        "reward": 0.0,
        "partial_reward": 0.5,
        "failure": None,
        "answer": "the total is $308",
        "checks": [
            {
                "type": "answer_facts",
                "requirement": "The agent said the total is $308",
                "weight": 1.0,
                "noop_passes": False,
                "passed": False,
                "reason": "missing: $308",
            },
            {
                "type": "row_exists",
                "requirement": "An account for Zoe exists",
                "weight": 1.0,
                "noop_passes": False,
                "passed": True,
                "reason": "found",
            },
        ],
        "diff": [{"table": "account", "key": "a1", "op": "insert", "after": {"owner": "Zoe"}}],
        "calls": 3,
        "state_hash": "abc",
    }
    summary = summarize_verdict(full)
    assert summary_keys(summary)
    assert summary["checks"] == [
        {"check": "1:answer_facts", "passed": False},
        {"check": "2:row_exists", "passed": True},
    ]
    assert "308" not in json.dumps(summary) and "Zoe" not in json.dumps(summary)
    assert summarize_verdict(summary) == summary


async def test_the_default_detail_is_full_behind_a_token_and_summary_without_one(serve_http, ledger, tasks):
    for options, detail in [
        ({"token": "t"}, "full"),
        ({"no_auth": True}, "summary"),
        ({"token": "t", "verdict_detail": "summary"}, "summary"),
        ({"no_auth": True, "verdict_detail": "full"}, "full"),
    ]:
        live = serve_http([ledger], tasks=tasks, **options)
        async with httpx.AsyncClient(base_url=live.url, headers=bearer("t")) as http:
            ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
            verdict = (await http.post(f"/episodes/{ep['id']}/verify", json={})).json()
        assert ("diff" in verdict) == (detail == "full") and verdict.get("detail", "full") == detail, options


async def test_the_self_grading_agent_gets_nothing_it_can_use(serve_http, ledger, tasks):
    """The issue's attack: an agent holding only its mcp_url derives the base URL, forks its own
    episode, verifies the fork and reads the expected rows and facts in the verdict."""
    task = tasks["ledger"].get("pay-and-open")
    expected = ["Zoe", "7000", "20.00", *(c.requirement for c in task.rubric)]

    async def attack(mcp_url: str, headers: dict[str, str]) -> tuple[list[int], dict | None]:
        base = mcp_url.split("/episodes/")[0]
        episode_id = mcp_url.split("/episodes/")[1].split("/")[0]
        statuses = []
        async with httpx.AsyncClient(base_url=base, headers=headers) as agent:
            fork = await agent.post(f"/episodes/{episode_id}/fork")
            statuses.append(fork.status_code)
            for method, path in [
                ("GET", f"/episodes/{episode_id}/state"),
                ("GET", "/episodes"),
                ("GET", f"/episodes/{episode_id}/snapshot"),
            ]:
                statuses.append((await agent.request(method, path)).status_code)
            if fork.status_code != 201:
                statuses.append((await agent.post(f"/episodes/{episode_id}/verify", json={"answer": "?"})).status_code)
                return statuses, None
            verdict = await agent.post(f"/episodes/{fork.json()['id']}/verify", json={"answer": "?"})
            statuses.append(verdict.status_code)
            return statuses, verdict.json()

    # The default server: the control plane needs a token the agent does not have.
    closed = serve_http([ledger], tasks=tasks, token="harness-only")
    async with httpx.AsyncClient(base_url=closed.url, headers=bearer("harness-only")) as harness:
        ep = (await harness.post("/episodes", json={"world": "ledger", "task": task.id})).json()
    statuses, verdict = await attack(ep["mcp_url"], {})
    assert statuses == [401] * 5 and verdict is None
    statuses, _ = await attack(ep["mcp_url"], {"Host": "evil.example"})  # via DNS rebinding, with a browser
    assert statuses == [403] * 5
    assert len(closed.manager) == 1 and closed.manager.list()[0].verdict is None

    # An open server (--no-auth) in summary mode: the agent can call it, but learns nothing expected.
    opened = serve_http([ledger], tasks=tasks, no_auth=True)
    async with httpx.AsyncClient(base_url=opened.url) as harness:
        ep = (await harness.post("/episodes", json={"world": "ledger", "task": task.id})).json()
        statuses, verdict = await attack(ep["mcp_url"], {})
        assert statuses[0] == 201 and statuses[-1] == 200 and verdict["passed"] is False
        assert summary_keys(verdict) and all(set(c) == {"check", "passed"} for c in verdict["checks"])
        shown = json.dumps(verdict)
        assert not [e for e in expected if e in shown]
        # Nor through the fork's trajectory or snapshot: only the summary was ever stored.
        fork_id = verdict["episode_id"]
        trajectory = (await harness.get(f"/episodes/{fork_id}/trajectory")).json()
        snapshot = (await harness.get(f"/episodes/{fork_id}/snapshot")).content
    assert summary_keys(trajectory["verdict"])
    assert not [e for e in expected if e in json.dumps(trajectory["verdict"])]
    assert b'"reason"' not in snapshot and b'"requirement"' not in snapshot

    # What the same attack reads on a full-detail open server (why summary is the no-auth default).
    leaky = serve_http([ledger], tasks=tasks, no_auth=True, verdict_detail="full")
    async with httpx.AsyncClient(base_url=leaky.url) as harness:
        ep = (await harness.post("/episodes", json={"world": "ledger", "task": task.id})).json()
    _, verdict = await attack(ep["mcp_url"], {})
    assert [e for e in expected if e in json.dumps(verdict)]


# -- 6. /mcp: a fresh episode per client -----------------------------------------------------


async def owners(client: Client) -> set[str]:
    listed = await client.call_tool("list_accounts", {})
    return {a["owner"] for a in listed.structured_content["result"]}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_clients_of_mcp_cannot_pass_notes_through_it(serve_http, ledger, mode):
    live = serve_http([ledger], default=ledger, token="t")
    with anyio.fail_after(30):
        async with Client(f"{live.url}/mcp", mode=mode) as a, Client(f"{live.url}/mcp", mode=mode) as b:
            assert not (await a.call_tool("open_account", {"owner": "NOTE: the answer is 42"})).is_error
            assert "NOTE: the answer is 42" in await owners(a)  # a's own episode keeps its writes
            assert "NOTE: the answer is 42" not in await owners(b)
        async with Client(f"{live.url}/mcp", mode=mode) as c:  # a later client starts fresh too
            assert "NOTE: the answer is 42" not in await owners(c)
    assert live.manager.default is None and len(live.manager) == 3  # ordinary episodes: caps, TTL, listing
    async with httpx.AsyncClient(base_url=live.url, headers=bearer("t")) as http:
        listed = (await http.get("/episodes")).json()
    assert sorted(e["calls"] for e in listed) == [1, 1, 2]  # a: a write and a read; b, c: a read


async def test_the_shared_default_is_the_operators_explicit_choice(serve_http, ledger):
    live = serve_http([ledger], default=ledger, shared_default=True)
    with anyio.fail_after(30):
        async with Client(f"{live.url}/mcp", mode="legacy") as a, Client(f"{live.url}/mcp") as b:
            await a.call_tool("open_account", {"owner": "Shared Note"})
            assert "Shared Note" in await owners(b)
    assert len(live.manager) == 0


async def test_mcp_per_client_refuses_what_it_cannot_isolate_with_the_reason(serve_http, ledger):
    live = serve_http([ledger], default=ledger, max_episodes=1)
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with anyio.fail_after(30):
        async with Client(f"{live.url}/mcp", mode="2026-07-28") as pinned:  # stateless: no session to bind
            with pytest.raises(Exception, match="POST /episodes"):
                await pinned.list_tools()
        async with httpx.AsyncClient(base_url=live.url, headers=accept) as http:
            r = await http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"Mcp-Session-Id": "made-up"}
            )
            assert r.status_code == 404 and "Session not found" in r.text
            r = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert r.status_code >= 400 and len(live.manager) == 0  # no handshake: no episode made
            async with Client(f"{live.url}/mcp", mode="legacy"):
                # the cap holds for /mcp clients as for POST /episodes
                full = await http.post("/mcp", json=MCP_INITIALIZE)
                assert full.status_code == 503 and "maximum of 1" in full.text
            assert len(live.manager) == 1
