"""The standard tools the worlds opt into (`mcpsim.world._standard`), tested once for every world
that has them: the calculator, and the hand-off whose ticket links the caller and what the
conversation is about."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcpsim.testing._driver import WorldDriver
from mcpsim.world._registry import load_world

# world: the example in the calculator's description and its value
CALCULATORS = {"retail": ("(49.99 * 2) - 10", 89.98), "airline": ("(214 + 189) * 2 + 50", 856.0)}
CALCULATORS["bank"] = ("2500 - 1875.40", 624.6)


@pytest.mark.parametrize("name", sorted(CALCULATORS))
def test_calculate_evaluates_arithmetic_and_refuses_anything_else(name: str, world_driver: Callable[..., Any]):
    d: WorldDriver = world_driver(load_world(name))
    example, value = CALCULATORS[name]
    assert f"such as '{example}'" in str(d.world.tools["calculate"].input_schema())
    assert d.ok("calculate", expression=example).result == value
    assert d.ok("calculate", expression="10 / 3").result == 3.33
    assert d.ok("calculate", expression="-2 ** 2 + 10 % 3").result == -3
    d.fails("calculate", "Division by zero", expression="1 / 0")
    d.fails("calculate", "Only numbers", expression="__import__('os').system('true')")
    d.fails("calculate", "not an arithmetic expression", expression="2 +")
    d.fails("calculate", "Exponent too large", expression="9 ** 9 ** 9")
    assert d.ep.net_changes() == {}


# world: the hand-off tool, its caller's argument and table, what it is about and the row's noun
HANDOFFS = {
    "retail": ("transfer_to_human_agent", "customer_id", "customers", "order_id", "orders", "Order"),
    "airline": ("transfer_to_human_agents", "user_id", "users", "reservation_id", "reservations", "Reservation"),
}


@pytest.mark.parametrize("name", sorted(HANDOFFS))
def test_a_hand_off_opens_a_ticket_linked_to_the_caller_and_to_what_it_is_about(
    name: str, world_driver: Callable[..., Any]
):
    d: WorldDriver = world_driver(load_world(name))
    tool, who, people, about, things, noun = HANDOFFS[name]
    thing = d.row(f"SELECT id, {who} AS owner FROM {things} ORDER BY id LIMIT 1")
    other = d.value(f"SELECT id FROM {people} WHERE id != ? ORDER BY id LIMIT 1", thing["owner"])
    caller = who.removesuffix("_id")
    summary = f"The {caller} wants a refund exception."
    # what it is about alone: the ticket names its owner as the caller
    ticket = d.ok(tool, summary=f"  {summary}  ", **{about: thing["id"]})
    row = d.row("SELECT * FROM tickets WHERE id = ?", ticket.ticket_id)
    assert (row[who], row[about], row["status"], row["summary"]) == (thing["owner"], thing["id"], "open", summary)
    d.fails(
        tool,
        f"{noun} {thing['id']} does not belong to {caller} {other}",
        summary=summary,
        **{who: other, about: thing["id"]},
    )
    d.fails(tool, "String should have at least 10 characters", summary="help", **{who: other})
    alone = d.ok(tool, summary=summary, **{who: other})
    assert d.row("SELECT * FROM tickets WHERE id = ?", alone.ticket_id)[about] is None
    assert d.value("SELECT COUNT(*) FROM tickets WHERE status = 'open' AND summary = ?", summary) == 2
    assert d.world.tools[tool].irreversible
