"""Running a real model, against the real HTTP fake (tests/support/fake_openai.py) through the CLI:
reasoning kept in the trajectory, a simulated user on its own endpoint and key, and an agent
class named on the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.runner._agents import Turn
from mcpsim.runner._llm import ChatClient
from mcpsim.runner._users import STOP
from mcpsim.trajectories._records import Message
from tests.support.fake_openai import FakeModel, fake_openai

TASK = "cancel-pending-order"
KEYS = {"OPENAI_API_KEY": "sk-agent", "USER_KEY": "sk-user"}


def _run(out: Path, *args: str) -> tuple[int, str, list[dict[str, Any]]]:
    result = CliRunner().invoke(main, ["run", "retail", "--tasks", TASK, "--out", str(out), *args], env=KEYS)
    path = out / "trajectories.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return result.exit_code, result.output, lines


def test_reasoning_is_kept_in_the_trajectory_and_never_sent_back(tmp_path: Path) -> None:
    model = FakeModel(
        [
            {"reasoning_content": "The user wants order details first.", "tool_calls": [("list_products", "{}")]},
            {"reasoning": "Listed; nothing else to do.", "content": "Here are the products."},
        ]
    )
    with fake_openai(model) as url:
        code, output, (trajectory,) = _run(tmp_path, "--agent", "openai:m", "--base-url", url)
    assert code == 0, output
    said = [m for m in trajectory["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in said] == [
        "The user wants order details first.",  # vLLM and SGLang's reasoning parsers, DeepSeek
        "Listed; nothing else to do.",  # newer vLLM, OpenRouter, Ollama
    ]
    assert said[0]["tool_calls"] and said[1]["content"] == "Here are the products."
    # The second request carries the first answer without its reasoning.
    sent = model.requests[1]["messages"]
    assert any(m.get("tool_calls") for m in sent)
    assert not any("reasoning_content" in m or "reasoning" in m for m in sent)


def test_the_simulated_user_has_its_own_endpoint_and_key(tmp_path: Path) -> None:
    agent = FakeModel(then=lambda body: {"content": "Which order do you mean?"})
    user = FakeModel([{"content": "Order #W2378156, please."}], then=lambda body: {"content": STOP})
    with fake_openai(agent) as agent_url, fake_openai(user) as user_url:
        code, output, (trajectory,) = _run(
            tmp_path,
            *("--agent", "openai:agent-model", "--base-url", agent_url),
            *("--user", "openai:user-model", "--user-base-url", user_url, "--user-api-key-env", "USER_KEY"),
        )
    assert code == 0, output
    assert {b["model"] for b in agent.requests} == {"agent-model"} and set(agent.keys) == {"sk-agent"}
    assert {b["model"] for b in user.requests} == {"user-model"} and set(user.keys) == {"sk-user"}
    assert len(user.requests) == 2  # the user answered once, then stopped
    assert "Order #W2378156, please." in [m["content"] for m in trajectory["messages"] if m["role"] == "user"]


def test_user_endpoint_options_need_a_model_user(tmp_path: Path) -> None:
    code, output, _ = _run(tmp_path, "--agent", "noop", "--user-base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and "--user-base-url and --user-api-key-env configure a --user openai:MODEL" in output


class BriefAgent:
    """A custom agent: its own system prompt and model name, the run's endpoint and length limit."""

    needs_task = False

    def __init__(self, base_url: str, max_tokens: int | None) -> None:
        self.client = ChatClient(model="brief-model", base_url=base_url, max_tokens=max_tokens)
        self.name = "brief"

    async def respond(self, turn: Turn) -> Message:
        messages = [Message(role="system", content="Answer in five words."), *turn.messages]
        return await self.client.complete(messages, turn.tools, turn.usage)

    async def aclose(self) -> None:
        await self.client.aclose()


class NotAnAgent:
    def respond(self, turn: Turn) -> Message:  # not async
        return Message(role="assistant", content="")


NOT_A_CLASS = 42


def test_an_agent_class_from_the_command_line_gets_the_run_options(tmp_path: Path) -> None:
    model = FakeModel()
    with fake_openai(model) as url:
        code, output, (trajectory,) = _run(
            tmp_path, "--agent", "tests.runner.test_real_model:BriefAgent", "--base-url", url, "--max-tokens", "64"
        )
    assert code == 0, output
    assert trajectory["agent"] == "brief"
    (body,) = model.requests
    assert body["model"] == "brief-model" and body["max_tokens"] == 64
    assert body["messages"][0] == {"role": "system", "content": "Answer in five words."}


def test_an_agent_that_cannot_be_loaded_is_a_usage_error_saying_why(tmp_path: Path) -> None:
    cases = {
        "no_such_package.agents:Agent": "cannot import no_such_package.agents: No module named 'no_such_package'",
        "tests.runner.test_real_model:Missing": "tests.runner.test_real_model has no attribute 'Missing'",
        "tests.runner.test_real_model:NOT_A_CLASS": "NOT_A_CLASS is a int, not a class",
        "tests.runner.test_real_model:NotAnAgent": "NotAnAgent is not an agent: it lacks async def respond(self, turn) "
        "and async def aclose(self)",
        "tests.runner.test_real_model:": "name a class as package.module:Class",
    }
    for spec, reason in cases.items():
        code, output, _ = _run(tmp_path / "x", "--agent", spec)
        assert code == 2, (spec, output)
        assert reason in " ".join(output.split()), (spec, output)  # click wraps long messages
