"""A task's measured difficulty (`TaskFeatures`): computed from the task and its gold solution
replayed on the real retail world, and the tier the thresholds in `TIERS` give."""

from __future__ import annotations

from typing import Any

import pytest

from mcpsim.tasks import Task, TaskFeatures, load_tasks
from mcpsim.world._registry import load_world

ORDER = "#W0006911"  # a pending order of the seeded shop


@pytest.fixture(scope="module")
def world():
    return load_world("retail")


def task(instruction: str, gold: list[dict[str, Any]], **extra: Any) -> Task:
    rubric = [
        {"type": "gold_state", "requirement": "The shop ends as the gold solution leaves it.", "noop_passes": False}
    ]
    return Task.model_validate(
        {"id": "t", "instruction": instruction, "gold": gold, "rubric": rubric, "difficulty": "easy", "split": "test"}
        | extra
    )


def test_a_chain_counts_values_only_a_result_shows(world):
    said = task(
        f"Please cancel order {ORDER}, no longer needed.",
        [
            {"tool": "get_order_details", "args": {"order_id": ORDER}},
            {"tool": "cancel_order", "args": {"order_id": ORDER, "reason": "no longer needed"}},
        ],
    )
    features = TaskFeatures.of(said, world)
    assert features.chain_depth == 0  # the id is in the first result too, but the user said it
    assert (features.gold_calls, features.tools_offered, features.tier) == (2, len(world.tools), "easy")

    shop = load_tasks("retail").get("set-default-saved-address")  # e-mail -> customer -> its address ids
    chained = TaskFeatures.of(shop, world)
    assert chained.chain_depth == 2 and chained.gold_calls == 3
    assert chained.confirmations == 1 and chained.rules >= 1  # a `confirmed` check: the gold asks first
    assert chained.tier == "medium"
    hidden = said.model_copy(update={"instruction": "Please cancel my latest order, I no longer need it."})
    assert TaskFeatures.of(hidden, world).chain_depth == 1  # now the id comes from the first result


def test_turns_and_pages_are_counted(world):
    paged = task(
        "Show me the second page of hiking products please, and then more.",
        [{"tool": "search_products", "args": {"query": "hiking", "offset": 20}}],
        user={"turns": ["And the next page?"]},
    )
    features = TaskFeatures.of(paged, world)
    assert (features.user_turns, features.pages) == (2, 1) and features.tier == "medium"


@pytest.mark.parametrize(
    ("values", "tier"),
    [
        ({}, "easy"),
        ({"gold_calls": 3, "chain_depth": 1}, "easy"),
        ({"gold_calls": 3, "chain_depth": 1, "rules": 1}, "medium"),
        ({"gold_calls": 4}, "medium"),
        ({"chain_depth": 2}, "medium"),
        ({"gold_calls": 9, "chain_depth": 2, "user_turns": 1}, "medium"),
        ({"gold_calls": 6, "chain_depth": 2, "user_turns": 2}, "hard"),
        ({"chain_depth": 3}, "hard"),
        ({"gold_calls": 10}, "hard"),
    ],
)
def test_the_tier_follows_the_thresholds(values: dict[str, int], tier: str):
    base = dict.fromkeys(["gold_calls", "chain_depth", "confirmations", "rules", "tools_offered", "pages"], 0)
    features = TaskFeatures(**(base | {"user_turns": 1} | values))
    assert features.tier == tier
    assert features.model_dump()["tier"] == tier  # and it is in the JSON
