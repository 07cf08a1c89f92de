"""The SkyRL adapter (mcpsim_client.adapters.skyrl) with the real `skyrl-gym` from PyPI in its own
venv: the environment is registered with and made by skyrl_gym, each instance is one mcpsim
episode of a real `mcpsim serve --http`, model text with <tool_call> blocks acts on it over MCP,
and the final answer gets mcpsim's verdict as the reward. (verl itself needs ray, vLLM or SGLang
and a GPU for its rollouts; see docs/trainers/status.md.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.venvs import cached_venv, run_in

pytestmark = pytest.mark.system

PROBE = Path(__file__).parents[1] / "support" / "adapter_skyrl_probe.py"


def test_skyrl_text_environment_acts_in_an_episode_and_gets_the_verdict(http_process: str) -> None:
    python = cached_venv("adapter-skyrl", ["skyrl-gym==0.4.0"])
    result = run_in(python, PROBE, http_process, env={"MCPSIM_TOKEN": "tok"})
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    right, wrong, capped = report["right"], report["wrong"], report["capped"]
    assert right["roles"] == ["system", "user"] and len(right["tools_in_prompt"]) == 24
    assert "find_customer_by_email" in right["tools_in_prompt"]
    assert right["request"].startswith("Hello, this is Matthew Murphy")
    assert right["mcp_url"].startswith(http_process + "/episodes/")
    assert right["observations"][0].startswith("<tool_response>") and "cus_1148152" in right["observations"][0]
    assert right["rewards"] == [0.0, 0.0, 1.0] and right["done"] == [False, False, True]
    parts = right["metadata"]  # why it ended, and the verdict's parts
    assert (parts["passed"], parts["reward"], parts["partial_reward"]) == (True, 1.0, 1.0)
    assert (parts["ending"], parts["truncated"], parts["strict"], parts["partial"]) == ("answered", False, 1.0, 1.0)
    assert parts["checks"] and set(parts["checks"].values()) == {1.0}
    assert right["metrics"]["mcpsim_passed"] == 1.0 and right["metrics"]["mcpsim_truncated"] == 0.0
    assert "the tool call is not valid" in wrong["observations"][1]  # nothing ran; the episode goes on
    assert wrong["done"] == [False, False, True] and 0.0 < wrong["rewards"][-1] < 1.0  # partial reward
    assert wrong["metadata"]["reward"] == 0.0
    assert capped["done"] == [False, True] and capped["rewards"][-1] == 0.0  # graded at max_turns
    assert capped["metadata"]["ending"] == "step_limit" and capped["metadata"]["truncated"] is True
    assert "checks" in capped["metadata"] and capped["metrics"]["mcpsim_truncated"] == 1.0
    failed = report["failed"]  # the episode vanished: the step ends it as an error, ungraded
    assert failed["done"] == [True] and failed["rewards"] == [0.0]
    assert failed["metadata"]["ending"] == "error" and failed["metadata"]["truncated"] is False
    assert "checks" not in failed["metadata"] and "no longer exists" in failed["metadata"]["error"]
    assert failed["metrics"]["mcpsim_failed"] == 1.0 and failed["metrics"]["mcpsim_truncated"] == 0.0
    # a dialogue through the server's user route: the question gets the user's yes, the write
    # after it passes the `confirmed` check; the same write without asking fails it
    dialogue, unconfirmed = report["dialogue"], report["unconfirmed"]
    assert dialogue["observations"][1] == "Yes, please go ahead."
    assert dialogue["done"] == [False, False, False, True] and dialogue["rewards"][-1] == 1.0
    assert unconfirmed["done"] == [False, False, True] and unconfirmed["rewards"][-1] == 0.0
    assert dialogue["metadata"]["checks"]["7:confirmed"] == 1.0
    assert unconfirmed["metadata"]["checks"]["7:confirmed"] == 0.0
    assert report["idle"]["done"] == [True] and report["idle"]["rewards"] == [0.0]  # a do-nothing rollout
