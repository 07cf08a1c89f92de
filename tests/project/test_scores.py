"""benchmarks/scores.py, the reference scores page: rendered from check reports alone, and a
submitted run added as a model's score (replacing that model's earlier score on the world)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import scores

ROOT = Path(__file__).resolve().parents[2]


def _report(tasks: int, gold_passes: int, greedy: int) -> dict:
    return {
        "world": "w",
        "tasks": [
            {"task_id": f"t{i}", "gold_reward": 1.0 if i < gold_passes else 0.0, "noop_reward": 0.0}
            for i in range(tasks)
        ],
        "baselines": {
            "policy_text": {"applied": tasks, "passed": 0, "not_applicable": 0},
            "one_step_greedy": {"applied": tasks - 1, "passed": greedy, "not_applicable": 1},
        },
    }


def test_the_page_shows_each_agent_per_world_from_the_reports_only(tmp_path: Path) -> None:
    page = scores.render({"alpha": _report(4, 4, 1), "beta": _report(3, 2, 0)}, [], "2026-12-07")
    assert "| agent | alpha | beta |" in page
    assert "| oracle | 4/4 | 2/3 |" in page and "| noop | 0/4 | 0/3 |" in page
    assert "| one_step_greedy | 1/3 | 0/2 |" in page and "| policy_text | 0/4 | 0/3 |" in page
    assert "None yet." in page and "Generated 2026-12-07" in page


def test_a_submitted_run_becomes_a_model_row(tmp_path: Path) -> None:
    results, run, page = tmp_path / "results", tmp_path / "run", tmp_path / "results.md"
    results.mkdir()
    run.mkdir()
    saved = {"generated": "2026-12-07", "reports": scores._slim({"retail": _report(2, 2, 0)})}
    (results / "scores.json").write_text(json.dumps(saved))
    summary = {"world": "retail", "episodes": 16, "pass_at_1": 0.25, "mean_reward": 0.25, "mean_partial": 0.5}
    (run / "summary.json").write_text(json.dumps(summary | {"tasks": []}))
    for _ in range(2):  # submitting twice keeps one row
        scores.main(["--add", str(run), "--model", "my-model", "--results", str(results), "--page", str(page)])
    models = json.loads((results / "model-scores.json").read_text())
    assert models == [{"model": "my-model", **summary}]
    assert "| my-model | retail | 16 | 0.250 | 0.250 | 0.500 |" in page.read_text()


def test_a_run_without_a_summary_is_refused(tmp_path: Path) -> None:
    (tmp_path / "scores.json").write_text(json.dumps({"generated": "x", "reports": {}}))
    with pytest.raises(SystemExit, match="summary.json not found"):
        scores.main(["--add", str(tmp_path / "nope"), "--model", "m", "--results", str(tmp_path)])


def test_the_committed_page_matches_the_committed_reports() -> None:
    saved = json.loads((ROOT / "benchmarks/results/scores.json").read_text())
    models_file = ROOT / "benchmarks/results/model-scores.json"
    models = json.loads(models_file.read_text()) if models_file.is_file() else []
    assert (ROOT / "docs/results.md").read_text() == scores.render(saved["reports"], models, saved["generated"])
