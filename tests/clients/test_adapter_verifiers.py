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
ADDRESS = "add-address-make-default"  # a dialogue task: solved by asking the user for the go-ahead
KENTUCKY = "set-default-saved-address"  # a dialogue task the model does nothing for
NEW_ADDRESS = {"line1": "88 Harbor View Rd", "line2": "Apt 12", "city": "Traverse City", "state": "MI", "zip": "49684"}
ASK = "I will add 88 Harbor View Rd, Apt 12 as your default address. Shall I go ahead?"


def _request(body: dict[str, Any]) -> str:
    """The user's request in a chat-completions request body."""
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def _tool(body: dict[str, Any], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A call of the offered tool `name` (whatever prefix the harness gives it)."""
    names = [t["function"]["name"] for t in body.get("tools") or []]
    return {"tool_calls": [(next(n for n in names if n.endswith(name)), json.dumps(arguments))]}


def _new_address(body: dict[str, Any]) -> dict[str, Any]:
    """The dialogue: look Derek up, ask for the go-ahead (the user's reply comes back as a user
    turn), then add the address, then answer."""
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    heard = [m["content"] for m in body["messages"] if m["role"] == "user"][1:]
    if done == 0:
        return _tool(body, "find_customer_by_email", {"email": "derek.smith@yahoo.com"})
    if not heard:
        return {"content": ASK}
    if done == 1:
        return _tool(body, "add_customer_address", {"customer_id": "cus_3673453", **NEW_ADDRESS, "make_default": True})
    return {"content": "Done: 88 Harbor View Rd, Apt 12 is your default address now."}


def _agent(body: dict[str, Any]) -> dict[str, Any]:
    """A scripted model: for the gift card, it looks the customer up through the tools it is
    offered, then answers; for the new address, it asks the user (`_new_address`); to anything
    else it answers at once, wrongly or doing nothing."""
    names = [t["function"]["name"] for t in body.get("tools") or []]
    if "Harbor View" in _request(body):
        return _new_address(body)
    if "Kentucky" in _request(body):
        return {"content": "Done, your Kentucky address is your default now."}
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


def _eval(python: Path, server: str, model: FakeModel, out: Path, *extra: str) -> dict[str, dict[str, Any]]:
    """`vf-eval` of the four tasks, one rollout each: the episodes by task id."""
    with fake_openai(model) as base_url:
        result = run_in(
            python,
            "vf-eval",
            *("mcpsim-verifiers", "--env.taskset.server", server, "--env.taskset.world", "retail"),
            *("--env.taskset.tasks", json.dumps([GIFT_CARD, DELIVERY, ADDRESS, KENTUCKY])),
            *("--env.agent.runtime.type", "subprocess", *extra),
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
    assert sorted(episodes) == [ADDRESS, DELIVERY, GIFT_CARD, KENTUCKY]
    for episode in episodes.values():
        assert episode["ok"] and not episode["errors"], episode["errors"]
        assert episode["task"]["data"]["system_prompt"].startswith("# Retail customer service policy")
    (passed,) = episodes[GIFT_CARD]["traces"]
    assert passed["rewards"]["mcpsim"] == {"score": 1.0, "weight": 1.0}
    assert passed["metrics"] == {"mcpsim_partial": 1.0, "mcpsim_passed": 1.0, "mcpsim_truncated": 0.0}
    # why it ended and the verdict's parts, in the trace's info
    parts = passed["info"]["mcpsim"]
    assert parts["ending"] == "answered" and parts["truncated"] is False and parts["strict"] == 1.0
    assert parts["checks"] and set(parts["checks"].values()) == {1.0}
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
    # a dialogue task: the agent's question went to the simulated user, whose yes came back as
    # verifiers' next user turn; the write after it passes the `confirmed` check
    (talked,) = episodes[ADDRESS]["traces"]
    assert talked["rewards"]["mcpsim"]["score"] == 1.0, talked["info"]
    assert talked["info"]["mcpsim"]["ending"] == "answered"
    dialogue = [r for r in model.requests if "Harbor View" in _request(r)]
    heard = [m["content"] for m in dialogue[-1]["messages"] if m["role"] == "user"]
    assert heard[1:] == ["Yes, please go ahead."]
    (idle,) = episodes[KENTUCKY]["traces"]  # a do-nothing rollout of a dialogue task
    assert idle["rewards"]["mcpsim"]["score"] == 0.0 and idle["info"]["mcpsim"]["ending"] == "answered"


def test_a_rollout_cut_by_the_user_turn_limit_is_truncated_not_failed(http_process: str, tmp_path: Path) -> None:
    """With no reply of the user's allowed, the dialogue rollout is cut at the question:
    `step_limit`, verifiers' own `max_turns` stop, graded as it stood (the address was never added)."""
    python = cached_venv("adapter-verifiers", REQUIREMENTS)
    limit = ("--env.taskset.max_user_turns", "0")
    episodes = _eval(python, http_process, FakeModel(then=_agent), tmp_path / "eval", *limit)
    (cut,) = episodes[ADDRESS]["traces"]
    assert cut["stop_condition"] == "max_turns" and cut["metrics"]["mcpsim_truncated"] == 1.0
    parts = cut["info"]["mcpsim"]
    assert parts["ending"] == "step_limit" and parts["truncated"] is True and "error" not in parts
    assert cut["rewards"]["mcpsim"]["score"] == 0.0 and parts["checks"]["1:row_exists"] == 0.0
    (answered,) = episodes[GIFT_CARD]["traces"]  # no user turn needed: the same limit cuts nothing
    assert answered["info"]["mcpsim"]["ending"] == "answered" and answered["rewards"]["mcpsim"]["score"] == 1.0
