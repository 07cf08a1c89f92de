"""`POST /jobs`: N rollouts of a task set run by the server with a built-in agent
(`mcpsim.runner._jobs.ServerJobs`, the runner's own episode loop on the server's episodes), each
result streamed back as one NDJSON line as it finishes, then a summary; bounded, and limited to
the agents and endpoint the operator allows."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack

import anyio
import httpx
import pytest

from mcpsim.runner._jobs import MAX_JOB_EPISODES, ServerJobs
from mcpsim.serve._app import build_app, serve_in_thread
from mcpsim.serve._host import EpisodeManager
from tests.support.fake_openai import FakeModel, fake_openai
from tests.support.verifier_fixtures import ledger_tasks


@pytest.fixture
def server(ledger, templates) -> Iterator[tuple[str, EpisodeManager, object]]:
    """A server of the ledger world and its tasks with a job runner: (url, manager, control plane)."""
    tasks = ledger_tasks(ledger, templates)
    manager = EpisodeManager(templates, max_episodes=20, ttl_seconds=None, tasks=lambda name: tasks)
    manager.set_default(ledger, 0, "small")
    app = build_app([ledger], manager, no_auth=True)
    app.state.control.jobs = ServerJobs()
    with ExitStack() as stack:
        yield stack.enter_context(serve_in_thread(app)), manager, app.state.control


def _lines(response: httpx.Response) -> list[dict]:
    return [json.loads(line) for line in response.text.splitlines()]


def test_a_job_streams_a_line_per_rollout_then_a_summary(server) -> None:
    url, manager, _ = server
    body = {"world": "ledger", "tasks": ["pay-and-open", "refuse-overdraft"], "trials": 3, "agent": "oracle"}
    answer = httpx.post(f"{url}/jobs", json=body, timeout=300)
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/x-ndjson", answer.text
    *results, summary = _lines(answer)
    assert sorted((r["task"], r["trial"]) for r in results) == sorted(
        (t, n) for t in ("pay-and-open", "refuse-overdraft") for n in range(3)
    )
    assert all(r["reward"] == 1.0 and r["status"] == "completed" and r["termination"] == "answered" for r in results)
    for task in ("pay-and-open", "refuse-overdraft"):  # deterministic: one final state per task
        assert len({r["state_hash"] for r in results if r["task"] == task}) == 1
    assert summary["done"] is True and summary["episodes"] == 6 and summary["passed"] == 6
    assert summary["mean_reward"] == 1.0 and summary["agent"] == "oracle"
    assert len(manager) == 0  # every rollout's episode deleted


def test_a_do_nothing_job_scores_zero_and_a_split_picks_the_tasks(server) -> None:
    url, _, _ = server
    answer = httpx.post(f"{url}/jobs", json={"split": "train", "agent": "noop", "concurrency": 2}, timeout=300)
    *results, summary = _lines(answer)
    assert results and {r["task"] for r in results} == {"pay-and-open"}  # the default world's train tasks
    assert all(r["reward"] == 0.0 and r["calls"] == 0 for r in results)
    assert summary["passed"] == 0 and summary["mean_reward"] == 0.0


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"tasks": ["pay-and-open"], "agent": "openai:gpt-x"}, "the endpoint the operator configured"),
        ({"tasks": ["pay-and-open"], "agent": "os:system"}, "oracle, noop, random, random:SHARE or openai:MODEL"),
        ({"tasks": ["pay-and-open"], "agent": "random:2"}, "share of malformed calls from 0 to 1"),
        ({"tasks": ["pay-and-open"] * 11, "trials": 100}, f"at most {MAX_JOB_EPISODES} rollouts"),
        ({"tasks": ["pay-and-open"], "trials": 101}, "trials: Input should be less than or equal to 100"),
        ({"tasks": ["pay-and-open"], "concurrency": 33}, "concurrency: Input should be less than or equal to 32"),
        ({"tasks": ["no-such-task"]}, "unknown task 'no-such-task'"),
        ({"world": "nope"}, "unknown world 'nope'"),
        ({"split": "nope"}, "no tasks of split 'nope'"),
        ({"tasks": ["pay-and-open"], "split": "train"}, "name tasks or a split, not both"),
        ({"tasks": ["pay-and-open"], "base_url": "http://evil.example"}, "base_url: Extra inputs are not permitted"),
        ([1, 2], "a job is a JSON object"),
    ],
)
def test_a_job_the_server_does_not_allow_is_refused_with_the_reason(server, body, fragment) -> None:
    url, manager, _ = server
    refused = httpx.post(f"{url}/jobs", json=body, timeout=60)
    assert refused.status_code == 422 and fragment in refused.json()["error"], refused.text
    assert len(manager) == 0


def test_an_openai_agent_runs_against_the_operators_endpoint_with_its_key(
    server, ledger, templates, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _, control = server
    gold = ledger_tasks(ledger, templates).get("pay-and-open").gold
    calls = [{"tool_calls": [(a.tool, json.dumps(a.args))]} for a in gold]
    model = FakeModel(script=[*calls, {"content": "Sent $20.00; Zoe is set up."}])
    monkeypatch.setenv("MCPSIM_JOB_TEST_KEY", "operator-key")
    with fake_openai(model) as base_url:
        control.jobs = ServerJobs(base_url=base_url, api_key_env="MCPSIM_JOB_TEST_KEY")
        answer = httpx.post(f"{url}/jobs", json={"tasks": ["pay-and-open"], "agent": "openai:m"}, timeout=300)
    result, summary = _lines(answer)
    assert result["reward"] == 1.0 and result["calls"] == len(gold), result
    assert summary["passed"] == 1 and summary["agent"] == "openai:m"
    assert model.requests and set(model.keys) == {"operator-key"}  # the operator's endpoint and key


def test_a_server_without_a_job_runner_says_so(server) -> None:
    url, _, control = server
    control.jobs = None
    refused = httpx.post(f"{url}/jobs", json={"tasks": ["pay-and-open"]}, timeout=60)
    assert refused.status_code == 404 and "runs no jobs" in refused.json()["error"]


class _Hanging:
    """A job runner whose run emits a line, then waits until it is cancelled (`cancelled` set)."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()

    def plan(self, body, manager):
        return body

    async def run(self, job, manager, emit) -> None:
        await emit({"n": 1})
        try:
            await anyio.sleep_forever()
        finally:
            self.cancelled.set()


def test_lines_are_sent_as_they_come_and_a_hang_up_cancels_the_job(server) -> None:
    url, _, control = server
    control.jobs = hanging = _Hanging()
    with httpx.Client(timeout=60) as http, http.stream("POST", f"{url}/jobs", json={}) as answer:
        assert answer.status_code == 200
        lines = answer.iter_lines()
        assert json.loads(next(lines)) == {"n": 1}  # sent while the job still runs
        assert not hanging.cancelled.is_set()
    # the client hung up: the job is cancelled, not left running
    assert hanging.cancelled.wait(60)


class _Failing:
    def plan(self, body, manager):
        return body

    async def run(self, job, manager, emit) -> None:
        await emit({"n": 1})
        raise RuntimeError("the runner broke")


def test_a_job_that_fails_midway_ends_with_a_line_saying_why(server) -> None:
    url, _, control = server
    control.jobs = _Failing()
    answer = httpx.post(f"{url}/jobs", json={}, timeout=60)
    assert answer.status_code == 200
    assert _lines(answer) == [{"n": 1}, {"done": True, "error": "the job failed: RuntimeError: the runner broke"}]
