"""The openai: agent and the LLM user against a fake OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json

import anyio
import pytest

from mcpsim.engine._templates import TemplateCache
from mcpsim.runner._agents import OpenAIAgent
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._llm import ChatClient
from mcpsim.runner._loop import RolloutSettings
from mcpsim.runner._run import RunConfig, run_episodes
from mcpsim.runner._users import LlmUser, ScriptedUser
from mcpsim.serve._host import EpisodeManager
from mcpsim.tasks import load_tasks
from mcpsim.trajectories._records import Trajectory
from mcpsim.world._registry import load_world
from tests.support.fake_openai import FakeModel, fake_openai

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def backend():
    return InProcessBackend(EpisodeManager(TemplateCache(), ttl_seconds=None))


@pytest.fixture(scope="module")
def task():
    tasks = load_tasks("retail").tasks
    return next(t for t in tasks if t.gold and t.gold[0].tool == "find_customer_by_email")


async def run_one(
    tmp_path, backend, task, model: FakeModel, *, max_steps: int = 30, user=None, retries: int = 2
) -> tuple[Trajectory, FakeModel]:
    with fake_openai(model) as base_url:
        config = RunConfig(
            world="retail", tasks=[task], out=tmp_path, settings=RolloutSettings(max_steps=max_steps, timeout=60)
        )
        with anyio.fail_after(60):
            await run_episodes(
                config,
                backend,
                lambda: OpenAIAgent(ChatClient(model="fake-1", base_url=base_url, retries=retries, backoff=0.01)),
                user or ScriptedUser,
            )
    (line,) = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    return Trajectory.model_validate_json(line), model


async def test_malformed_calls_become_clear_tool_errors_and_the_episode_goes_on(tmp_path, backend, task):
    email = task.gold[0].args["email"]
    model = FakeModel(
        script=[
            {"tool_calls": [("find_customer_by_email", '{"email": "unterminated')]},
            {"tool_calls": [("find_customer_by_email", '["not", "an", "object"]')]},
            {"tool_calls": [("launch_rocket", "{}")]},
            {"tool_calls": [("find_customer_by_email", json.dumps({"email": 42}))]},
            {"tool_calls": [("find_customer_by_email", json.dumps({"email": email}))]},
            {"content": "I found your account."},
        ]
    )
    t, model = await run_one(tmp_path, backend, task, model)
    assert t.status == "completed" and t.termination == "answered" and t.agent == "openai:fake-1"
    errors = [c.error for c in t.calls]
    assert "not a valid JSON object" in errors[0] and "not a valid JSON object" in errors[1]
    assert "launch_rocket" in errors[2] and "Unknown tool" in errors[2]
    assert "email" in errors[3] and "string" in errors[3]
    assert t.calls[4].ok and errors[4] is None
    tool_messages = [m for m in t.messages if m.role == "tool"]
    assert len(tool_messages) == 5 and all(m.content.startswith("Error") for m in tool_messages[:2])
    assert t.usage.total_tokens == 6 * 110 and t.usage.model_calls == 6
    assert t.verdict is not None and t.reward == 0.0  # the task was not done: graded, not crashed
    first = model.requests[0]
    assert first["messages"][0]["role"] == "system" and first["messages"][1]["content"] == task.instruction
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert names == sorted(names) and len(names) == len(load_world("retail").tools)
    assert all(r["tools"] == first["tools"] for r in model.requests)  # a stable prefix, every turn


async def test_a_model_that_never_stops_hits_the_step_limit(tmp_path, backend, task):
    model = FakeModel(then=lambda body: {"tool_calls": [("list_product_categories", "{}")]})
    t, _ = await run_one(tmp_path, backend, task, model, max_steps=5)
    assert t.termination == "step_limit" and len(t.calls) == 5 and t.status == "completed"
    assert t.verdict is not None


async def test_transport_errors_are_retried_and_a_dead_endpoint_ends_the_episode_clearly(tmp_path, backend, task):
    flaky = FakeModel(script=[{"status": 503}, {"status": 500}, {"content": "Hello."}])
    t, model = await run_one(tmp_path / "flaky", backend, task, flaky, retries=2)
    assert t.termination == "answered" and len(model.requests) == 3
    dead = FakeModel(then=lambda body: {"status": 500})
    t, model = await run_one(tmp_path / "dead", backend, task, dead, retries=2)
    assert t.termination == "model_error" and t.status == "error" and "failed 3 times" in t.error
    assert len(model.requests) == 3 and t.reward == 0.0


async def test_a_client_error_is_not_retried(tmp_path, backend, task):
    bad = FakeModel(then=lambda body: {"status": 400})
    t, model = await run_one(tmp_path, backend, task, bad, retries=3)
    assert t.termination == "model_error" and "refused the request" in t.error and len(model.requests) == 1


async def test_the_llm_user_plays_the_persona_and_stops_with_the_stop_token(tmp_path, backend, task):
    agent_and_user = FakeModel(
        script=[
            {"content": "Could you give me your email?"},  # agent
            {"content": f"Sure, it is {task.gold[0].args['email']}."},  # user
            {"content": "Thanks, you are all set."},  # agent
            {"content": "###STOP###"},  # user
        ]
    )
    with fake_openai(agent_and_user) as base_url:

        def make_user(task):
            return LlmUser(task, ChatClient(model="user-1", base_url=base_url, backoff=0.01))

        config = RunConfig(world="retail", tasks=[task], out=tmp_path)
        with anyio.fail_after(60):
            await run_episodes(
                config, backend, lambda: OpenAIAgent(ChatClient(model="agent-1", base_url=base_url)), make_user
            )
    (t,) = [Trajectory.model_validate_json(line) for line in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert t.termination == "answered" and "Thanks" in t.verdict["answer"]
    user_request = agent_and_user.requests[1]
    assert user_request["model"] == "user-1" and "tools" not in user_request
    assert task.instruction in user_request["messages"][0]["content"]  # the persona's brief
    assert user_request["messages"][-1] == {"role": "user", "content": "Could you give me your email?"}
