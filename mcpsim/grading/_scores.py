"""Scores over many graded episodes: pass@1 and pass^k from each task's (passes, trials).

One definition for every reader of verdicts: `mcpsim run`'s summary (`mcpsim.runner._summary`) and
the viewer's (`mcpsim.view._runs`). Figures are rounded to six places, so two readers of one run
print the same numbers."""

from __future__ import annotations

from collections.abc import Iterable
from math import comb

Outcome = tuple[int, int]  # (passes, trials) of one task


def mean(values: Iterable[float]) -> float:
    """The mean rounded to six places; 0.0 for no values."""
    values = list(values)
    return round(sum(values) / len(values), 6) if values else 0.0


def pass_at_1(outcomes: Iterable[Outcome]) -> float:
    """The mean over tasks of the share of trials that pass."""
    return mean(p / n for p, n in outcomes)


def pass_hat_k(outcomes: Iterable[Outcome], ks: Iterable[int] | None = None) -> dict[int, float]:
    """pass^k: the chance that k trials of a task all pass, C(passes, k) / C(trials, k), averaged
    over tasks, for each k in `ks` (default: 1 up to the fewest trials any task has)."""
    tasks = list(outcomes)
    for p, n in tasks:
        if not 0 <= p <= n or n < 1:
            raise ValueError(f"an outcome is (passes, trials) with 0 <= passes <= trials and trials >= 1, not {(p, n)}")
    fewest = min((n for _, n in tasks), default=0)
    wanted = range(1, fewest + 1) if ks is None else sorted(set(ks))
    for k in wanted:
        if not 1 <= k <= fewest:
            raise ValueError(f"pass^{k} needs 1 <= k <= {fewest} (the fewest trials of a task)")
    return {k: mean(comb(p, k) / comb(n, k) for p, n in tasks) for k in wanted}
