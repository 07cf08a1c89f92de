"""The held-out audit of whole solutions (`tests/grading/solution_audit.py`, issue 28's "Done
when") on a small fixed sample: every solution played over MCP by a runner agent, its requests for
the go-ahead answered by the scripted user, graded with the full conversation. At most 3% of the
correct solutions refused and at most 2% of the wrong or cheap ones passed, on tasks of the four
hand-built worlds and of a generated catalogue world; every class of the audit is tried."""

from __future__ import annotations

import pytest

from tests.grading.solution_audit import (
    CATALOG_SEED,
    PASSED_AT_MOST,
    REFUSED_AT_MOST,
    Worlds,
    catalogue_worlds,
    run_audit,
    tally,
)

SAMPLE = {
    "retail": [
        "cancel-pending-order",
        "exchange-hoodie-size",
        "track-shipped-order",
        "refuse-cancel-shipped-order",
        "redeem-and-pay-pending-order",
    ],
    "airline": [
        "compensation-cancelled-flight-platinum",
        "book-one-way-economy",
        "refuse-change-basic-fare",
        "lookup-next-trip",
        "cancel-airline-cancelled-no-compensation",
    ],
    "bank": [
        "update-email-and-phone",
        "dispute-unknown-charge-freeze-first",
        "dispute-duplicate-charge",
        "available-balance-with-pending",
        "refuse-transfer-over-daily-limit",
    ],
    "workspace": [
        "cal-book-tom-redlines",
        "mail-send-vendor-sheet-to-priya",
        "cal-accept-allhands",
        "lookup-next-one-on-one",
        "refuse-share-someone-elses-file",
    ],
}
GENERATED_TASKS = 6


@pytest.fixture(scope="module")
def outcomes():
    worlds: Worlds = catalogue_worlds(1, CATALOG_SEED, tasks=GENERATED_TASKS)
    generated = list(worlds.worlds)
    assert len(generated) == 1
    return run_audit(worlds, [*SAMPLE, *generated], only=SAMPLE)


def test_correct_work_passes_and_cheap_work_fails(outcomes):
    per_world, total, _ = tally(outcomes)
    assert len(per_world) == 5
    shown = {
        name: (r.correct, r.refused, r.wrong, r.passed) for name, r in per_world.items()
    }  # for the failure message
    assert total.correct >= 120 and total.wrong >= 100, shown
    assert total.refused_share <= REFUSED_AT_MOST, shown
    assert total.passed_share <= PASSED_AT_MOST, shown
    for name, r in per_world.items():  # no world far off the mark
        assert r.refused_share <= 2 * REFUSED_AT_MOST and r.passed_share <= 2 * PASSED_AT_MOST, (name, shown)


def test_every_class_of_the_issue_is_tried(outcomes):
    _, _, per_class = tally(outcomes)
    assert set(per_class) >= {
        *("gold", "alternative", "reads reordered", "extra harmless read", "answer in words", "report in words"),
        *("request in prose", "request as a list", "one request per write"),
        *("denial after the value", "guesses across sentences", "swapped subjects"),
        *("report contradicting the outcome", "request for another action", "one request for several writes"),
        *("repeated effect", "zero-call guess", "wrong write", "missing write"),
    }
