"""Task episodes over the control plane: create with a task, verify, snapshot."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client

from mcpsim.engine._episode import Episode
from tests.support.verifier_fixtures import CANARY, ledger_tasks

pytestmark = pytest.mark.anyio


@pytest.fixture
def live(serve_http, ledger, templates):
    # The tests read the checks' reasons and the diff: the full verdict (the default behind a token).
    return serve_http([ledger], tasks={"ledger": ledger_tasks(ledger, templates)}, verdict_detail="full")


async def test_a_task_episode_is_driven_over_mcp_then_verified_and_frozen(live, ledger, templates):
    task = ledger_tasks(ledger, templates).get("pay-and-open")
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        assert (ep["task"], ep["seed"], ep["scale"]) == ("pay-and-open", 1, "small")
        with anyio.fail_after(20):
            async with Client(ep["mcp_url"]) as client:
                for action in task.gold:
                    assert not (await client.call_tool(action.tool, action.args)).is_error
        verdict = (
            await http.post(f"/episodes/{ep['id']}/verify", json={"answer": "Sent $20.00; Zoe is set up."})
        ).json()
        assert verdict["passed"] and verdict["reward"] == 1.0 and verdict["task_id"] == "pay-and-open"
        assert verdict["world_version"] == ledger.version and verdict["diff"]
        assert CANARY not in str(verdict)  # verdicts go to harnesses, but still carry no canary
        assert (await http.get(f"/episodes/{ep['id']}")).json()["ended"] is True
        with anyio.fail_after(20):
            async with Client(ep["mcp_url"]) as client:
                late = await client.call_tool("open_account", {"owner": "After The End"})
        assert late.is_error and "ended" in late.content[0].text


async def test_a_do_nothing_episode_verifies_as_a_failure_with_reasons(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        verdict = (await http.post(f"/episodes/{ep['id']}/verify")).json()
    assert verdict["passed"] is False and verdict["reward"] == 0.0
    failed = [c for c in verdict["checks"] if not c["passed"]]
    assert failed and all(c["reason"] for c in failed)


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"world": "ledger", "task": "no-such-task"}, 422, "unknown task 'no-such-task'"),
        ({"world": "ledger", "task": "pay-and-open", "seed": 2}, 422, "runs at seed 1"),
        ({"world": "ledger", "task": "pay-and-open", "scale": "default"}, 422, "runs at scale 'small'"),
        ({"world": "ledger", "task": 7}, 422, "valid string"),
    ],
)
async def test_bad_task_requests_get_a_4xx_with_the_reason(live, body, status, fragment):
    async with httpx.AsyncClient(base_url=live.url) as http:
        r = await http.post("/episodes", json=body)
    assert r.status_code == status and fragment in r.text


async def test_verify_refuses_an_episode_without_a_task_and_a_malformed_body(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        plain = (await http.post("/episodes", json={"world": "ledger", "scale": "small"})).json()
        r = await http.post(f"/episodes/{plain['id']}/verify", json={"answer": "hi"})
        assert r.status_code == 422 and "not created for a task" in r.text
        task_ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        r = await http.post(f"/episodes/{task_ep['id']}/verify", json={"answer": 42})
        assert r.status_code == 422
        r = await http.post(f"/episodes/{task_ep['id']}/verify", json={"answer": "x" * 200_000})
        assert r.status_code == 413
        assert (await http.get(f"/episodes/{task_ep['id']}")).json()["ended"] is False


async def test_a_snapshot_downloads_the_episode_database(live, ledger):
    async with httpx.AsyncClient(base_url=live.url) as http:
        ep = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()
        state = (await http.get(f"/episodes/{ep['id']}/state")).json()
        r = await http.get(f"/episodes/{ep['id']}/snapshot")
    assert r.headers["content-type"] == "application/vnd.sqlite3"
    restored = Episode.restore(ledger, r.content)
    assert restored.state_hash() == state["state_hash"] and restored.task_id == "pay-and-open"


async def test_faults_are_chosen_per_episode_and_bad_profiles_get_422(live):
    async with httpx.AsyncClient(base_url=live.url) as http:
        flaky = (await http.post("/episodes", json={"world": "ledger", "scale": "small", "faults": "flaky"})).json()
        plain = (await http.post("/episodes", json={"world": "ledger", "scale": "small"})).json()
        inline = (
            await http.post(
                "/episodes",
                json={
                    "world": "ledger",
                    "scale": "small",
                    "faults": {
                        "name": "scripted",
                        "script": [{"tool": "list_accounts", "call": 1, "fault": "transient"}],
                    },
                },
            )
        ).json()
        assert (flaky["faults"], plain["faults"], inline["faults"]) == ("flaky", None, "scripted")
        with anyio.fail_after(20):
            async with Client(inline["mcp_url"]) as client:
                first = await client.call_tool("list_accounts", {})
                second = await client.call_tool("list_accounts", {})
        assert first.is_error and "503" in first.content[0].text and not second.is_error
        for bad, fragment in (
            ("chaotic", "unknown fault profile: use one of none, flaky, hostile"),
            ({"name": "x", "rules": [{"rates": {"transient": 2}}]}, "less than or equal to 1"),
        ):
            r = await http.post("/episodes", json={"world": "ledger", "scale": "small", "faults": bad})
            assert r.status_code == 422 and fragment in r.text


async def test_concurrent_verifies_grade_in_one_worker_thread_at_a_time(live, monkeypatch):
    """The control plane's work off the event loop (here: grading) runs one thread at a time
    (`mcpsim.serve._work`), not in as many as anyio allows: every verify is answered, none two
    at once, none on the server's event loop."""
    import threading
    import time

    from mcpsim.grading._grader import Verifier

    state = {"now": 0, "most": 0, "threads": set()}
    lock = threading.Lock()
    grade = Verifier.grade

    def watched(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            state["threads"].add(threading.current_thread().name)
        try:
            time.sleep(0.05)  # long enough for the others to start, were they allowed to
            return grade(self, *args, **kwargs)
        finally:
            with lock:
                state["now"] -= 1

    monkeypatch.setattr(Verifier, "grade", watched)
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        ids = [
            (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()["id"]
            for _ in range(5)
        ]
        verdicts: list[dict] = []

        async def verify(episode_id: str) -> None:
            verdicts.append((await http.post(f"/episodes/{episode_id}/verify")).json())

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for episode_id in ids:
                    tg.start_soon(verify, episode_id)
    assert len(verdicts) == 5 and all(v["passed"] is False and v["task_id"] == "pay-and-open" for v in verdicts)
    assert state["most"] == 1  # never two gradings at once (anyio's default would let all five in)
    assert all(name.startswith("AnyIO worker thread") for name in state["threads"]), state["threads"]


async def test_a_long_grade_does_not_hold_up_creating_or_deleting_episodes(live, monkeypatch):
    """Grading has a lane of its own: while one verify grades (here: until released), episodes
    are still created and deleted."""
    import threading

    from mcpsim.grading._grader import Verifier

    release, grading = threading.Event(), threading.Event()
    grade = Verifier.grade

    def held(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        grading.set()
        release.wait(60)
        return grade(self, *args, **kwargs)

    monkeypatch.setattr(Verifier, "grade", held)
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        first = (await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})).json()["id"]
        result: list[dict] = []
        try:
            async with anyio.create_task_group() as tg:

                async def verify() -> None:
                    result.append((await http.post(f"/episodes/{first}/verify")).json())

                tg.start_soon(verify)
                with anyio.fail_after(30):
                    while not grading.is_set():
                        await anyio.sleep(0.01)
                    created = await http.post("/episodes", json={"world": "ledger", "task": "pay-and-open"})
                    assert created.status_code == 201
                    assert (await http.delete(f"/episodes/{created.json()['id']}")).status_code == 204
                release.set()
        finally:
            release.set()
    assert result and result[0]["task_id"] == "pay-and-open"
