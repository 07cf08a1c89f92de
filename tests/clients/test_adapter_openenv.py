"""The OpenEnv adapter (mcpsim_client.adapters.openenv) with the real `openenv` package from
PyPI, in its own venv (its `fastmcp` wants `mcp<2`, which cannot share mcpsim's): OpenEnv's own
server (create_app) serves mcpsim episodes of a real `mcpsim serve --http`, OpenEnv's own client
drives them over its WebSocket sessions (reset, step, state), and the reward is the verifier's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.venvs import cached_venv, run_in

pytestmark = pytest.mark.system

PROBE = Path(__file__).parents[1] / "support" / "adapter_openenv_probe.py"
OPENENV = "openenv==0.10.0"


def test_openenv_sessions_act_in_mcpsim_episodes_and_get_its_reward(http_process: str) -> None:
    python = cached_venv("adapter-openenv", [OPENENV])
    result = run_in(python, PROBE, http_process, "tok")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    right, wrong = report["right"], report["wrong"]
    assert right["reset"] == {"task": "gift-card-balance", "tools": 24, "roles": ["system", "user"], "done": False}
    assert right["state_before"]["mcp_url"].startswith(http_process + "/episodes/")
    assert right["state_before"]["mcp_url"] != wrong["state_before"]["mcp_url"]  # one episode per session
    assert right["lookup"] == {"error": False, "reward": 0.0, "done": False}
    assert right["lookup_result"]["customer_id"] == "cus_1148152"  # the world's real row, over MCP
    assert right["end"] == {"reward": 1.0, "done": True, "passed": True, "partial": 1.0}
    assert wrong["end"]["reward"] == 0.0 and wrong["end"]["passed"] is False and 0 < wrong["end"]["partial"] < 1
    assert right["state_after"] == {"step_count": 3, "verdict": True}
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
