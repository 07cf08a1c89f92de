"""The TRL adapter (mcpsim_client.adapters.trl) with the real `trl` from PyPI and torch 2.13
(CPU, from this machine's disk) in their own venv: GRPOTrainer trains two steps on a tiny randomly
initialised model with mcpsim episodes as its environments (one per rollout, the world's tools and
the simulated user as the environment's methods) and mcpsim's verifier as the reward, against a
real `mcpsim serve --http`. A random model calls no tool, so the same environment objects are
also driven by hand: a rollout that does the task gets 1.0, a wrong answer 0.0; a dialogue task
passes when the user's go-ahead is asked through `send_message_to_user`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.venvs import cached_venv, run_in

pytestmark = pytest.mark.system

PROBE = Path(__file__).parents[1] / "support" / "adapter_trl_probe.py"
REQUIREMENTS = ["torch==2.13.0", "trl==1.16.0"]


@pytest.fixture(scope="module")
def report(http_process: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The probe's report (one run: it trains)."""
    python = cached_venv("adapter-trl", REQUIREMENTS)
    out = str(tmp_path_factory.mktemp("grpo"))
    result = run_in(python, PROBE, http_process, "tok", out, env={"TRL_EXPERIMENTAL_SILENCE": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_grpo_trains_on_mcpsim_episodes_with_its_rewards(report: dict[str, Any]) -> None:
    assert report["steps"] == 2 and report["rewards"] == [0.0, 0.0]  # graded by mcpsim: a random model fails
    # the tools asked for, and the simulated user as one more (TRL offers every public method)
    assert report["offered"] == ["find_customer_by_email", "get_customer_details", "send_message_to_user"]
    assert len(report["every"]) == 25 and "cancel_order" in report["every"]  # by default, every retail tool
    assert report["found"] == "cus_1148152" and report["details_has_balance"] is True
    assert report["right"] == [1.0] and report["wrong"] == [0.0]
    assert report["left_over"] == []  # every rollout's episode was deleted after grading
    # why each rollout ended reaches TRL's metrics and completions table: a random model's 16
    # tokens end without an end-of-turn token, so TRL cut them (step_limit), not answered
    assert report["truncated"] == [1.0, 1.0] and report["endings"] == ["step_limit", "step_limit"]


def test_a_dialogue_task_passes_when_the_user_is_asked_and_each_rollout_says_how_it_ended(
    report: dict[str, Any],
) -> None:
    assert report["dialogue_offered"] == ["add_customer_address", "find_customer_by_email", "send_message_to_user"]
    assert report["dialogue_user"] == "Yes, please go ahead."  # the server's simulated user
    reward, ending, info = report["dialogue"]
    assert (reward, ending) == (1.0, "answered")
    assert info["strict"] == 1.0 and info["partial"] == 1.0 and info["truncated"] is False
    assert info["checks"] and set(info["checks"].values()) == {1.0}  # each check by its numbered name
    assert all(name.split(":")[0].isdigit() for name in info["checks"])
    assert report["unasked"] == [0.0, "answered"]  # the same write without the go-ahead fails
    assert report["nothing"] == [0.0, "answered"]  # a do-nothing rollout
    # cut mid-tool-call by TRL's limit (after the work was done): truncated, graded as it stood,
    # without a final answer (so no check of the answer)
    reward, ending, info = report["cut"]
    assert (reward, ending, info["truncated"]) == (info["strict"], "step_limit", True)
    assert "7:confirmed" in info["checks"] and not any(name.endswith(":report") for name in info["checks"])
    reward, ending, info, said = report["failed"]  # the server failed a call: an error, ungraded
    assert (reward, ending, info["truncated"]) == (0.0, "error", False)
    assert "checks" not in info and "episode" in info["error"].lower() and said.startswith("Error:")
    assert report["log_extra"]["mcpsim_ending"] == ["step_limit"]  # the last reward call's rollout
    assert report["log_metric"]["mcpsim_truncated"] == 1.0
