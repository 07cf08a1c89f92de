"""tools/task_metrics.py: the four figures of a task set (mean gold calls, the shares of tasks of
ten calls or more, of one call, and chained), from per-task calls and chain depths."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).parents[2] / "tools" / "task_metrics.py"


@pytest.fixture(scope="module")
def metrics():
    spec = importlib.util.spec_from_file_location("task_metrics", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_figures_count_long_one_call_and_chained_tasks(metrics):
    rows = [
        {"calls": 1, "chain_depth": 0},
        {"calls": 12, "chain_depth": 5},
        {"calls": 5, "chain_depth": 1},
        {"calls": 2, "chain_depth": 0},
    ]
    assert metrics.figures(rows) == {
        "tasks": 4,
        "gold_calls_mean": 5.0,
        "share_10_or_more": 0.25,
        "share_one_call": 0.25,
        "share_chained": 0.5,
    }


def test_a_task_without_a_dependent_call_is_not_chained(metrics):
    figures = metrics.figures([{"calls": 9, "chain_depth": 0}])
    assert figures["share_chained"] == 0 and figures["share_10_or_more"] == 0
