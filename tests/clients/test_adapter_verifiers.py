"""The verifiers adapter (taskset `mcpsim-verifiers`, mcpsim_client.adapters.verifiers) with the
real `verifiers` package from PyPI in its own venv (it pins mcp==2.0.0, mcpsim needs >=2.2):
`vf-eval` runs rollouts whose tool calls act in mcpsim episodes of a real `mcpsim serve --http`
over MCP (verifiers' own chat harness, its MCP client), against the real HTTP fake of an
OpenAI-compatible model, and records mcpsim's verdict as the reward. `uv` is installed beside
it: verifiers runs its harness program as a uv script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeModel, fake_openai
from tests.support.venvs import cached_venv, run_in

pytestmark = pytest.mark.system

REQUIREMENTS = ["verifiers==0.4.0", "uv"]
GIFT_CARD = "gift-card-balance"  # the scripted model solves this one
DELIVERY = "delivery-date-and-carrier"  # and answers this one wrongly, without looking


def _request(body: dict[str, Any]) -> str:
    """The user's request in a chat-completions request body."""
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def _agent(body: dict[str, Any]) -> dict[str, Any]:
    """A scripted model: for the gift card, it looks the customer up through the tools it is
    offered (whatever prefix the harness gives their names), then answers; to anything else it
    answers at once, wrongly."""
    names = [t["function"]["name"] for t in body.get("tools") or []]
    if "gift card" not in _request(body):
        return {"content": "It was delivered yesterday by FedEx."}
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done == 0:
        email = {"email": "matthew_murphy198@gmail.com"}
        return {"tool_calls": [(next(n for n in names if n.endswith("find_customer_by_email")), json.dumps(email))]}
    if done == 1:
        customer = {"customer_id": "cus_1148152"}
        return {"tool_calls": [(next(n for n in names if n.endswith("get_customer_details")), json.dumps(customer))]}
    return {"content": "You have $329.73 left on your gift card."}


def _eval(python: Path, server: str, model: FakeModel, out: Path) -> dict[str, dict[str, Any]]:
    """`vf-eval` of both tasks, one rollout each: the episodes by task id."""
    with fake_openai(model) as base_url:
        result = run_in(
            python,
            "vf-eval",
            *("mcpsim-verifiers", "--env.taskset.server", server, "--env.taskset.world", "retail"),
            *("--env.taskset.tasks", json.dumps([GIFT_CARD, DELIVERY]), "--env.agent.runtime.type", "subprocess"),
            *("--model", "fake-1", "--client.base-url", base_url, "--client.api-key-var", "FAKE_API_KEY"),
            *("--num-rollouts", "1", "--output-dir", str(out), "--push", "false"),
            env={"MCPSIM_TOKEN": "tok", "FAKE_API_KEY": "unused"},
            timeout=900,
        )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (traces,) = out.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    return {e["task"]["data"]["id"]: e for e in episodes}


def test_vf_eval_rollouts_act_in_mcpsim_episodes_scored_by_its_verifier(http_process: str, tmp_path: Path) -> None:
    python = cached_venv("adapter-verifiers", REQUIREMENTS)
    model = FakeModel(then=_agent)
    episodes = _eval(python, http_process, model, tmp_path / "eval")
    assert sorted(episodes) == [DELIVERY, GIFT_CARD]
    for episode in episodes.values():
        assert episode["ok"] and not episode["errors"], episode["errors"]
        assert episode["task"]["data"]["system_prompt"].startswith("# Retail customer service policy")
    (passed,) = episodes[GIFT_CARD]["traces"]
    assert passed["rewards"]["mcpsim"] == {"score": 1.0, "weight": 1.0}
    assert passed["metrics"] == {"mcpsim_partial": 1.0, "mcpsim_passed": 1.0}
    (failed,) = episodes[DELIVERY]["traces"]
    assert failed["rewards"]["mcpsim"]["score"] == 0.0  # the verifier's verdict, not a constant
    assert failed["metrics"]["mcpsim_passed"] == 0.0 and failed["metrics"]["mcpsim_partial"] < 1.0
    # the model was offered the episode's tools over MCP, and its calls reached the episode
    solving = [r for r in model.requests if "gift card" in _request(r)]  # the two rollouts interleave
    offered = {t["function"]["name"] for t in solving[0]["tools"]}
    assert {"mcpsim_find_customer_by_email", "mcpsim_cancel_order"} <= offered
    assert not any(name.startswith(("bash", "edit")) for name in offered)  # the world's tools only
    results = [m["content"] for m in solving[-1]["messages"] if m["role"] == "tool"]
    assert "cus_1148152" in str(results[0]) and "329.73" in str(results[1])
