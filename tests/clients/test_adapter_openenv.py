"""The OpenEnv adapter (mcpsim_client.adapters.openenv) with the real `openenv` package from
PyPI, in its own venv (its `fastmcp` wants `mcp<2`, which cannot share mcpsim's): OpenEnv's own
server (create_app) serves mcpsim episodes of a real `mcpsim serve --http`, OpenEnv's own client
drives them over its WebSocket sessions (reset, step, state), and the reward is the verifier's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.venvs import cached_venv, run_in

pytestmark = pytest.mark.system

PROBE = Path(__file__).parents[1] / "support" / "adapter_openenv_probe.py"
OPENENV = "openenv==0.10.0"


@pytest.fixture(scope="module")
def report(http_process: str) -> dict[str, Any]:
    """The probe's report (one run of its sessions)."""
    python = cached_venv("adapter-openenv", [OPENENV])
    result = run_in(python, PROBE, http_process, "tok")
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_openenv_sessions_act_in_mcpsim_episodes_and_get_its_reward(http_process: str, report: dict[str, Any]) -> None:
    right, wrong = report["right"], report["wrong"]
    assert right["reset"] == {"task": "gift-card-balance", "tools": 24, "roles": ["system", "user"], "done": False}
    assert right["state_before"]["mcp_url"].startswith(http_process + "/episodes/")
    assert right["state_before"]["mcp_url"] != wrong["state_before"]["mcp_url"]  # one episode per session
    assert right["lookup"] == {"error": False, "reward": 0.0, "done": False}
    assert right["lookup_result"]["customer_id"] == "cus_1148152"  # the world's real row, over MCP
    assert right["end"] == {"reward": 1.0, "done": True, "passed": True, "partial": 1.0}
    assert wrong["end"]["reward"] == 0.0 and wrong["end"]["passed"] is False and 0 < wrong["end"]["partial"] < 1
    assert right["state_after"] == {"step_count": 3, "verdict": True} and right["ending"] == "answered"
    # why it ended and the verdict's parts, in the observation's metadata
    parts = right["end_metadata"]
    assert parts["ending"] == "answered" and parts["truncated"] is False
    assert (parts["strict"], parts["partial"], parts["passed"]) == (1.0, 1.0, True)
    assert parts["checks"] and set(parts["checks"].values()) == {1.0}
    assert all(name.split(":")[0].isdigit() for name in parts["checks"])
    assert 0.0 in wrong["end_metadata"]["checks"].values() and wrong["end_metadata"]["strict"] == 0.0
    assert "VALIDATION_ERROR" in right["bad_action"]  # an action with both a tool call and a message
    # a dialogue through the server's user route: the user says yes to the question, and the
    # write after it passes the task's `confirmed` check
    assert report["dialogue"]["user"] == "Yes, please go ahead." and report["dialogue"]["asked_done"] is False
    assert report["dialogue"]["reward"] == 1.0 and report["dialogue"]["done"] is True
    assert report["dialogue"]["roles"] == ["system", "user", "assistant", "tool", "assistant", "user"] + [
        "assistant",
        "tool",
        "assistant",
    ]
    assert report["dialogue"]["metadata"]["ending"] == "answered"
    assert report["dialogue"]["metadata"]["checks"]["7:confirmed"] == 1.0
    idle = report["idle"]  # a do-nothing rollout of the dialogue task
    assert idle["reward"] == 0.0 and idle["done"] is True and idle["metadata"]["ending"] == "answered"


def test_openenv_episodes_say_whether_they_were_cut_or_failed(report: dict[str, Any]) -> None:
    capped = report["capped"]  # max_steps=1: cut after the lookup, graded as it stood
    assert capped["done"] is True and capped["reward"] == 0.0
    assert capped["metadata"]["ending"] == "step_limit" and capped["metadata"]["truncated"] is True
    assert "checks" in capped["metadata"] and "error" not in capped["metadata"]
    failed = report["failed"]  # the episode was deleted under the session: an error, ungraded
    assert failed["done"] is True and failed["reward"] is None and failed["ending"] == "error"
    assert failed["metadata"]["ending"] == "error" and failed["metadata"]["truncated"] is False
    assert "checks" not in failed["metadata"] and "no longer exists" in failed["metadata"]["error"]
