"""Retail under injected faults: the documented intermediate states and the tools that recover."""

from __future__ import annotations

import pytest

from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import FaultProfile


def with_faults(shop, script: list[dict]) -> None:
    shop.ep.set_faults(FaultProfile(name="test", script=script))


def test_a_payment_failure_leaves_the_order_awaiting_payment_with_items_reserved(shop):
    with_faults(shop, [{"tool": "place_order", "call": 1, "fault": "partial"}])
    variant = shop.in_stock_variant()
    customer = shop.row(
        "SELECT c.id FROM customers c JOIN payment_methods p ON p.customer_id = c.id "
        "WHERE p.kind = 'paypal' AND c.default_address_id IS NOT NULL LIMIT 1"
    )["id"]
    method = shop.usable_method(customer, "paypal")["id"]
    stock = shop.stock(variant["id"])
    r = shop.call(
        "place_order",
        customer_id=customer,
        items=[{"variant_id": variant["id"], "quantity": 2}],
        payment_method_id=method,
    )
    assert r.is_error and "awaiting payment" in r.error and "retry_order_payment" in r.error
    order = shop.row("SELECT * FROM orders WHERE customer_id = ? AND status = 'payment_pending'", customer)
    assert shop.stock(variant["id"]) == stock - 2  # reserved
    assert shop.rows("SELECT * FROM payments WHERE order_id = ?", order["id"]) == []  # not charged
    paid = shop.ok("retry_order_payment", order_id=order["id"], payment_method_id=method)
    assert paid.status == "pending"
    (charge,) = shop.rows("SELECT * FROM payments WHERE order_id = ?", order["id"])
    assert (charge["kind"], charge["amount_cents"]) == ("charge", 2 * variant["price_cents"])
    shop.fails("retry_order_payment", "only orders awaiting payment", order_id=order["id"], payment_method_id=method)


def test_an_order_awaiting_payment_can_be_cancelled_with_nothing_to_refund(shop):
    with_faults(shop, [{"tool": "place_order", "call": 1, "fault": "partial"}])
    variant = shop.in_stock_variant()
    customer = shop.row("SELECT customer_id FROM payment_methods WHERE kind = 'paypal' LIMIT 1")["customer_id"]
    method = shop.usable_method(customer, "paypal")["id"]
    stock = shop.stock(variant["id"])
    shop.call(
        "place_order",
        customer_id=customer,
        items=[{"variant_id": variant["id"], "quantity": 1}],
        payment_method_id=method,
    )
    order = shop.row("SELECT id FROM orders WHERE status = 'payment_pending'")["id"]
    assert shop.ok("cancel_order", order_id=order, reason="ordered by mistake").status == "cancelled"
    assert shop.stock(variant["id"]) == stock


def test_a_refund_failure_cancels_the_order_but_leaves_its_refund_queued(shop):
    with_faults(shop, [{"tool": "cancel_order", "call": 1, "fault": "partial"}])
    order = shop.row(
        "SELECT o.id, m.kind FROM orders o JOIN payments p ON p.order_id = o.id JOIN payment_methods m "
        "ON m.id = p.payment_method_id WHERE o.status IN ('pending', 'processing') ORDER BY m.kind = "
        "'gift_card' DESC LIMIT 1"
    )
    gift = order["kind"] == "gift_card"
    paid = shop.net_paid(order["id"])
    method = shop.charged_method(order["id"])
    balance = shop.balance(method) if gift else None
    r = shop.call("cancel_order", order_id=order["id"], reason="no longer needed")
    assert r.is_error and "queued" in r.error and "resend_refund" in r.error
    assert shop.value("SELECT status FROM orders WHERE id = ?", order["id"]) == "cancelled"
    (queued,) = shop.rows("SELECT * FROM payments WHERE order_id = ? AND kind = 'refund'", order["id"])
    assert (queued["status"], queued["amount_cents"]) == ("queued", paid)
    if gift:
        assert shop.balance(method) == balance  # not credited while queued
    shop.ok("resend_refund", payment_id=queued["id"])
    sent = shop.value("SELECT status FROM payments WHERE id = ?", queued["id"])
    assert sent == ("completed" if gift else "pending")  # cards and PayPal take days
    if gift:
        assert shop.balance(method) == balance + paid
    shop.fails("resend_refund", "nothing to resend", payment_id=queued["id"])


def test_a_transient_fault_on_a_cancellation_changes_nothing(shop):
    with_faults(shop, [{"tool": "cancel_order", "call": 1, "fault": "transient"}])
    order = shop.order_with_status("pending")
    before = shop.ep.state_hash()
    r = shop.call("cancel_order", order_id=order["id"], reason="no longer needed")
    assert r.is_error and "503" in r.error and shop.ep.state_hash() == before
    assert shop.ok("cancel_order", order_id=order["id"], reason="no longer needed").status == "cancelled"


def test_pagination_caps_a_page_so_the_agent_has_to_page(shop):
    with_faults(shop, [{"tool": "list_customer_orders", "call": 1, "fault": "paginate"}])
    customer = shop.row("SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC LIMIT 1")
    assert customer["n"] > 2
    first = shop.call("list_customer_orders", customer_id=customer["customer_id"], limit=10)
    assert not first.is_error and len(first.value.orders) == 2 and first.value.total_count == customer["n"]
    assert first.fault == {"kind": "paginate", "attempt": 1, "limit": [10, 2]}
    second = shop.ok("list_customer_orders", customer_id=customer["customer_id"], limit=10)
    assert len(second.orders) == min(10, customer["n"])


@pytest.mark.parametrize("profile", ["flaky", "hostile"])
def test_the_builtin_profiles_never_break_an_invariant_or_flag_a_bug(retail, templates, profile):
    import random

    from mcpsim.engine._faults import BUILTIN
    from mcpsim.runner._random import Seen, sample_arguments  # the random agent's argument sampler

    ep = Episode.create_with_faults(retail, 3, "small", BUILTIN[profile], templates=templates)
    rng = random.Random(0)
    names = sorted(retail.tools)
    seen = [r["id"] for r in ep.query("SELECT id FROM orders")] + [
        r["id"] for r in ep.query("SELECT id FROM customers")
    ]
    for _ in range(300):
        spec = retail.tools[rng.choice(names)]
        schema = spec.input_schema()
        ep.call(spec.name, sample_arguments(schema, rng, Seen({}, seen)))
    assert not ep.flagged, ep.flags
    negative = ep.query("SELECT count(*) AS n FROM variants WHERE stock < 0")[0]["n"]
    overdrawn = ep.query("SELECT count(*) AS n FROM payment_methods WHERE balance_cents < 0")[0]["n"]
    assert negative == 0 and overdrawn == 0
    assert any(r.fault for r in ep.transcript())
