"""`mcpsim calibrate` against the real HTTP fake model (tests/support/fake_openai.py): pass@1 and
pass^k per task written to a calibration file, which `mcpsim run --calibration FILE
--max-pass-rate/--min-pass-rate` selects by, as `--tier` selects by the measured tier that
`mcpsim tasks --json` shows."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mcpsim.cli import main
from tests.support.fake_openai import FakeModel, fake_openai

TASKS = "cancel-pending-order,set-default-saved-address"
ENV = {"OPENAI_API_KEY": "sk-test"}


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env=ENV)
    return result.exit_code, result.output


def ran(out: Path) -> list[str]:
    return sorted({json.loads(line)["task_id"] for line in (out / "trajectories.jsonl").read_text().splitlines()})


def test_calibrate_writes_pass_rates_that_run_selects_by(tmp_path: Path) -> None:
    model = FakeModel()  # answers "All done." at once: every episode fails
    path = tmp_path / "calibration.json"
    with fake_openai(model) as url:
        code, output = invoke(
            *("calibrate", "retail", "--agent", "openai:m", "--base-url", url, "--trials", "2", "--tasks", TASKS),
            *("--out", str(tmp_path / "run"), "--calibration", str(path)),
        )
    assert code == 0, output
    assert len(model.requests) == 4  # two tasks, two trials each, over real HTTP
    data = json.loads(path.read_text())
    assert data["world"] == "retail" and data["agent"] == "openai:m" and data["trials"] == 2
    assert set(data["tasks"]) == set(TASKS.split(","))
    measured = data["tasks"]["cancel-pending-order"]
    assert measured | {"features": None} == {
        "trials": 2,
        "passes": 0,
        "pass_at_1": 0.0,
        "pass_hat_k": 0.0,
        "features": None,
    }
    assert data["tasks"]["set-default-saved-address"]["features"]["chain_depth"] == 2

    data["tasks"]["set-default-saved-address"]["pass_at_1"] = 1.0  # as if the model solved it every time
    path.write_text(json.dumps(data))
    base = ("run", "retail", "--agent", "noop", "--tasks", TASKS, "--calibration", str(path))
    code, output = invoke(*base, "--max-pass-rate", "0.5", "--out", str(tmp_path / "hard"))
    assert code == 0, output
    assert ran(tmp_path / "hard") == ["cancel-pending-order"]
    code, output = invoke(*base, "--min-pass-rate", "0.5", "--out", str(tmp_path / "easy"))
    assert code == 0, output
    assert ran(tmp_path / "easy") == ["set-default-saved-address"]
    code, output = invoke(*base, "--min-pass-rate", "0.5", "--max-pass-rate", "0.9", "--out", str(tmp_path / "none"))
    assert code == 2 and "no task matches" in output
    code, output = invoke("run", "retail", "--agent", "noop", "--max-pass-rate", "0.5", "--out", str(tmp_path / "x"))
    assert code == 2 and "--calibration" in output


def test_tasks_json_shows_measured_features_and_run_selects_by_tier(tmp_path: Path) -> None:
    code, output = invoke("tasks", "retail", "--json")
    assert code == 0
    tasks = {t["id"]: t for t in json.loads(output)}
    features = tasks["set-default-saved-address"]["features"]
    assert features["gold_calls"] == len(tasks["set-default-saved-address"]["gold"]) and features["chain_depth"] == 2
    tiers = {t["id"]: t["features"]["tier"] for t in tasks.values()}
    chosen = [i for i in TASKS.split(",")]
    wanted = tiers[chosen[1]]
    code, output = invoke(
        *("run", "retail", "--agent", "noop", "--tasks", TASKS, "--tier", wanted, "--out", str(tmp_path / "t"))
    )
    assert code == 0, output
    assert ran(tmp_path / "t") == sorted(i for i in chosen if tiers[i] == wanted)
    assert {tiers[i] for i in chosen} != {wanted}  # the other task was left out
