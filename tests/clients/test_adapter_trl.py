"""The TRL adapter (mcpsim_client.adapters.trl) with the real `trl` from PyPI and torch 2.13
(CPU, from this machine's disk) in their own venv: GRPOTrainer trains two steps on a tiny randomly
initialised model with mcpsim episodes as its environments (one per rollout, the world's tools as
the environment's methods) and mcpsim's verifier as the reward, against a real
`mcpsim serve --http`. A random model calls no tool, so the same environment objects are also
driven by hand: a rollout that does the task gets 1.0, a wrong answer 0.0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.venvs import cached_venv, run_in

pytestmark = pytest.mark.system

PROBE = Path(__file__).parents[1] / "support" / "adapter_trl_probe.py"
REQUIREMENTS = ["torch==2.13.0", "trl==1.16.0"]


def test_grpo_trains_on_mcpsim_episodes_with_its_rewards(http_process: str, tmp_path: Path) -> None:
    python = cached_venv("adapter-trl", REQUIREMENTS)
    result = run_in(python, PROBE, http_process, "tok", str(tmp_path), env={"TRL_EXPERIMENTAL_SILENCE": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["steps"] == 2 and report["rewards"] == [0.0, 0.0]  # graded by mcpsim: a random model fails
    assert report["offered"] == ["find_customer_by_email", "get_customer_details"]  # the tools asked for
    assert len(report["every"]) == 24 and "cancel_order" in report["every"]  # by default, every retail tool
    assert report["found"] == "cus_1148152" and report["details_has_balance"] is True
    assert report["right"] == [1.0] and report["wrong"] == [0.0]
    assert report["left_over"] == []  # every rollout's episode was deleted after grading
