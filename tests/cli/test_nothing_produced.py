"""Commands that would produce nothing the user asked for exit non-zero with the reason, and leave
no empty file behind (issue 35): an export that keeps no episode, a task filter that keeps none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsim.cli import main

TASK = "cancel-pending-order"


@pytest.fixture(scope="module")
def noop_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of the do-nothing agent (no token ids, reward 0)."""
    out = tmp_path_factory.mktemp("runs") / "noop"
    result = CliRunner().invoke(main, ["run", "retail", "--agent", "noop", "--tasks", TASK, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _export(run: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["export", str(run), *args])
    return result.exit_code, result.output


def test_a_tokens_export_of_a_run_without_token_ids_fails_and_writes_nothing(noop_run: Path) -> None:
    code, output = _export(noop_run, "--format", "tokens")
    assert code == 1, output
    assert "nothing to export" in output and "skipped 1 unusable as tokens" in output
    assert "run with --token-ids" in output
    assert not (noop_run / "export.tokens.jsonl").exists()
    assert [p.name for p in noop_run.iterdir() if p.name.startswith(".export")] == []  # no temporary file


def test_a_min_reward_that_keeps_nothing_fails_and_keeps_the_previous_file(noop_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "passed.jsonl"
    dest.write_text("an earlier export\n", encoding="utf-8")
    code, output = _export(noop_run, "--format", "trl", "--min-reward", "1", "--out", str(dest))
    assert code == 1, output
    assert "skipped 1 below min_reward" in output
    assert "no completed episode has a reward of at least --min-reward 1" in output
    assert dest.read_text(encoding="utf-8") == "an earlier export\n"
    code, output = _export(noop_run, "--format", "trl", "--min-reward", "0", "--out", str(dest))  # keeps it
    assert code == 0 and "wrote 1 episodes" in output, output


@pytest.mark.parametrize("fmt", ["openai", "verifiers", "parquet"])
def test_an_export_of_a_run_whose_every_episode_was_skipped_fails(noop_run: Path, tmp_path: Path, fmt: str) -> None:
    pytest.importorskip("pyarrow", reason="the parquet export needs pyarrow (pip install 'mcpsim[parquet]')")
    line = json.loads((noop_run / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()[0])
    cancelled = tmp_path / "cancelled"
    cancelled.mkdir()
    (cancelled / "trajectories.jsonl").write_text(json.dumps(line | {"status": "cancelled"}) + "\n", encoding="utf-8")
    code, output = _export(cancelled, "--format", fmt)
    assert code == 1, output
    assert "skipped 1 cancelled" in output and "only completed episodes are exported" in output
    assert sorted(p.name for p in cancelled.iterdir()) == ["trajectories.jsonl"]


def test_an_export_of_an_empty_run_fails(tmp_path: Path) -> None:
    (tmp_path / "trajectories.jsonl").write_text("", encoding="utf-8")
    code, output = _export(tmp_path, "--format", "openai")
    assert code == 1 and "holds no episodes" in output, output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trajectories.jsonl"]


def test_a_task_filter_that_keeps_nothing_is_a_usage_error_naming_what_exists() -> None:
    result = CliRunner().invoke(main, ["tasks", "retail", "--tag", "refund", "--tag", "nonesuch", "--split", "train"])
    assert result.exit_code == 0, result.output  # keeps some
    result = CliRunner().invoke(main, ["tasks", "retail", "--tag", "nonesuch", "--json"])
    assert result.exit_code == 2
    assert "no task of retail matches --tag nonesuch" in result.output and "refusal" in result.output
