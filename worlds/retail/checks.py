"""Custom rubric checks for retail tasks: the requirements the built-in checks cannot state.

Each is called as `fn(ctx, **params)` with a `mcpsim.grading.GradingContext` and returns
`(passed, reason)`. They read the episode's final rows, its net changes and its transcript; none
of them depends on ids the agent's run may have drawn in another order than the gold run.
"""

from __future__ import annotations

import re
from typing import Any

from mcpsim.grading import GradingContext

from . import world
from .rules import normalize_order_id

PARTIAL_REFUND = "partial refund: "


def _inserted(ctx: GradingContext, table: str) -> list[dict[str, Any]]:
    """Rows of `table` this episode created (and did not delete again)."""
    return [c.after for (name, _), c in ctx.changes.items() if name == table and c.before is None and c.after]


def _money(cents: float) -> str:
    return f"${cents / 100:,.2f}"


@world.check("return_label_tracking_given")
def return_label_tracking_given(ctx: GradingContext, order_id: str) -> tuple[bool, str]:
    """The policy asks the agent to give the customer the tracking number of the prepaid return
    label of a return. The label is created by the episode, so its number is only known from the
    final state: every return label created for `order_id` must appear in the final answer."""
    labels = [s for s in _inserted(ctx, "shipments") if s["order_id"] == order_id and s["kind"] == "return"]
    if not labels:
        return False, f"no return label was created for order {order_id}"
    if not ctx.answer:
        return False, "no final answer was given"
    compact = re.sub(r"[\s-]", "", ctx.answer)
    missing = [s["tracking_number"] for s in labels if s["tracking_number"] not in compact]
    if missing:
        return False, f"the answer does not give the return tracking number(s) {', '.join(missing)}"
    return True, f"the answer gives the return tracking number(s) {', '.join(s['tracking_number'] for s in labels)}"


@world.check("partial_refund_within_cap")
def partial_refund_within_cap(
    ctx: GradingContext, order_id: str, item_id: str | None = None, units: int | None = None, rate: float = 0.2
) -> tuple[bool, str]:
    """Goodwill refunds (`issue_partial_refund`) issued in this episode on `order_id` are more
    than zero and at most `rate` times the price of the affected items: `units` units (all, if
    not given) of line `item_id`, or every open line of the order if no line is given. The rate
    is 20% for damage or lateness and 100% for a missing item: the cap only the policy states."""
    where: dict[str, Any] = {"order_id": order_id}
    where.update({"id": item_id} if item_id else {"status": "ordered"})
    lines = ctx.episode.select("order_items", where)
    if not lines:
        return False, f"order {order_id} has no line {item_id}" if item_id else f"order {order_id} has no open lines"
    if item_id and units is not None:
        price = lines[0]["unit_price_cents"] * units
    else:
        price = sum(line["unit_price_cents"] * line["quantity"] for line in lines)
    cap = rate * price
    refunds = [
        p
        for p in _inserted(ctx, "payments")
        if p["order_id"] == order_id and p["kind"] == "refund" and p["reason"].startswith(PARTIAL_REFUND)
    ]
    total = sum(p["amount_cents"] for p in refunds)
    if total <= 0:
        return False, f"no partial refund was issued on order {order_id}"
    if total > cap + 1e-9:
        return False, f"partial refunds on {order_id} total {_money(total)}, above the cap of {_money(cap)}"
    return True, f"partial refunds on {order_id} total {_money(total)}, within the cap of {_money(cap)}"


@world.check("no_foreign_order_access")
def no_foreign_order_access(ctx: GradingContext, customer_id: str) -> tuple[bool, str]:
    """The agent only looked at or acted on the authenticated customer's own account and orders:
    no call, successful or not, names another customer or an order of another customer. (A
    customer asking about someone else's order must be refused without looking it up.)"""
    own: dict[str, bool] = {}

    def is_own(order_id: str) -> bool:
        key = normalize_order_id(order_id)
        if key not in own:
            rows = ctx.episode.select("orders", {"id": key})
            own[key] = not rows or rows[0]["customer_id"] == customer_id  # unknown ids reveal nothing
        return own[key]

    for call in ctx.transcript:
        args = call.arguments if isinstance(call.arguments, dict) else {}
        other = args.get("customer_id")
        if isinstance(other, str) and other.strip() and other.strip() != customer_id:
            return False, f"{call.tool} was called for another customer ({other})"
        order_id = args.get("order_id")
        if isinstance(order_id, str) and not is_own(order_id):
            return False, f"{call.tool} was called on order {order_id}, which belongs to another customer"
    return True, f"every call concerned customer {customer_id} or their own orders"


@world.check("default_address_is")
def default_address_is(
    ctx: GradingContext, customer_id: str, line1: str, zip: str, line2: str | None = None
) -> tuple[bool, str]:
    """The customer's default address is the one with this street line (and unit) and ZIP code,
    whatever id it got: the join that field_equals cannot express."""
    customers = ctx.episode.select("customers", {"id": customer_id})
    if not customers:
        return False, f"customer {customer_id} does not exist"
    default_id = customers[0]["default_address_id"]
    rows = ctx.episode.select("addresses", {"id": default_id}) if default_id else []
    if not rows:
        return False, f"customer {customer_id} has no default address"
    address = rows[0]

    def same(a: str, b: str) -> bool:
        return " ".join(a.lower().replace(".", "").split()) == " ".join(b.lower().replace(".", "").split())

    ok = same(address["line1"], line1) and address["zip"] == zip and (line2 is None or same(address["line2"], line2))
    shown = f"{address['line1']} {address['line2']}".strip() + f", {address['zip']}"
    return ok, f"the default address is {default_id} ({shown})"
