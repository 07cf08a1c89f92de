"""Orders before they ship: placing, looking up, cancelling, changing items, payment and address."""

from __future__ import annotations

from typing import Any

import pytest


def buyer(shop, kind: str = "credit_card") -> tuple[dict, dict]:
    """A customer and one of their payment methods of `kind` that can be charged."""
    method = shop.row(
        "SELECT * FROM payment_methods WHERE customer_id IS NOT NULL AND kind = ? "
        "AND (kind != 'credit_card' OR exp_year * 100 + exp_month >= 202605) ORDER BY id LIMIT 1",
        kind,
    )
    return shop.row("SELECT * FROM customers WHERE id = ?", method["customer_id"]), method


def placing(customer_id: str, method_id: str, *variant_ids: str, quantity: int | None = None) -> dict[str, Any]:
    """Arguments for place_order: one line per variant, of `quantity` units (the tool's default if None)."""
    lines = [{"variant_id": v} if quantity is None else {"variant_id": v, "quantity": quantity} for v in variant_ids]
    return {"customer_id": customer_id, "payment_method_id": method_id, "items": lines}


def swapping(order_id: str, item_id: str, new_variant_id: str) -> dict[str, Any]:
    """Arguments for modify_pending_order_items changing one line to another variant."""
    return {"order_id": order_id, "changes": [{"item_id": item_id, "new_variant_id": new_variant_id}]}


# -- looking up --------------------------------------------------------------------------------


def test_order_details_show_items_payments_and_shipments(shop):
    order = shop.order_with_status("delivered")
    details = shop.ok("get_order_details", order_id=order["id"])
    items = shop.rows("SELECT * FROM order_items WHERE order_id = ?", order["id"])
    assert details.status == "delivered" and {i.item_id for i in details.items} == {i["id"] for i in items}
    assert details.items_total == sum(i["unit_price_cents"] * i["quantity"] for i in items) / 100
    assert details.net_paid == details.total_charged == details.items_total
    assert [s.status for s in details.shipments if s.kind == "outbound"] == ["delivered"]


def test_an_order_id_without_the_hash_is_accepted_and_an_unknown_one_is_not_found(shop):
    order = shop.order_with_status("pending")
    assert shop.ok("get_order_details", order_id=order["id"].lstrip("#")).order_id == order["id"]
    shop.fails("get_order_details", "Order #W0000000 not found", order_id="#W0000000")


def test_a_customers_orders_are_listed_newest_first_in_bounded_pages(shop):
    customer_id = shop.value("SELECT customer_id FROM orders GROUP BY customer_id ORDER BY COUNT(*) DESC LIMIT 1")
    ids = [
        r["id"] for r in shop.rows("SELECT id FROM orders WHERE customer_id = ? ORDER BY placed_at DESC", customer_id)
    ]
    assert len(ids) >= 3
    page = shop.ok("list_customer_orders", customer_id=customer_id, limit=2)
    rest = shop.ok("list_customer_orders", customer_id=customer_id, limit=50, offset=2)
    assert page.total_count == len(ids) and [o.order_id for o in page.orders + rest.orders] == ids
    status = shop.value("SELECT status FROM orders WHERE id = ?", ids[0])
    filtered = shop.ok("list_customer_orders", customer_id=customer_id, status=status)
    assert filtered.orders and {o.status for o in filtered.orders} == {status}
    assert shop.call("list_customer_orders", customer_id=customer_id, limit=51).is_error
    assert shop.call("list_customer_orders", customer_id=customer_id, status="lost").is_error


def test_a_shipment_is_tracked_by_its_number(shop):
    shipment = shop.row("SELECT * FROM shipments WHERE kind = 'outbound' AND status = 'in_transit' LIMIT 1")
    tracked = shop.ok("track_shipment", tracking_number=shipment["tracking_number"])
    assert tracked.shipment.order_id == shipment["order_id"] and tracked.shipment.status == "in_transit"
    items = shop.rows("SELECT id FROM order_items WHERE shipment_id = ?", shipment["id"])
    assert sorted(tracked.item_ids) == sorted(i["id"] for i in items) and items
    shop.fails("track_shipment", "No shipment has tracking number 1Z000", tracking_number="1Z000")


# -- placing -----------------------------------------------------------------------------------


def test_placing_an_order_reserves_stock_and_charges_the_total(shop):
    customer, card = buyer(shop)
    a = shop.in_stock_variant()
    b = shop.in_stock_variant(exclude_product=a["product_id"])
    order = shop.ok(
        "place_order",
        customer_id=customer["id"],
        payment_method_id=card["id"],
        items=[{"variant_id": a["id"], "quantity": 2}, {"variant_id": b["id"]}],
    )
    total = a["price_cents"] * 2 + b["price_cents"]
    assert order.status == "pending" and order.order_id.startswith("#W")
    assert (shop.stock(a["id"]), shop.stock(b["id"])) == (a["stock"] - 2, b["stock"] - 1)
    assert shop.net_paid(order.order_id) == total and order.total_charged == total / 100
    default = shop.row("SELECT * FROM addresses WHERE id = ?", customer["default_address_id"])
    assert (order.shipping_address.line1, order.shipping_address.zip) == (default["line1"], default["zip"])


def test_an_order_needs_enough_stock_of_an_available_variant(shop):
    customer, card = buyer(shop)
    low = shop.in_stock_variant(min_stock=1)
    shop.arrange("UPDATE variants SET stock = 3 WHERE id = ?", low["id"])
    shop.fails("place_order", "Only 3 unit(s) of variant", **placing(customer["id"], card["id"], low["id"], quantity=4))
    shop.arrange("UPDATE variants SET available = 0 WHERE id = ?", low["id"])
    shop.fails("place_order", "is discontinued", **placing(customer["id"], card["id"], low["id"], quantity=1))
    shop.fails("place_order", "Variant var_nope not found", **placing(customer["id"], card["id"], "var_nope"))


def test_a_payment_method_must_belong_to_the_customer(shop):
    customer, _ = buyer(shop)
    foreign = shop.row("SELECT * FROM payment_methods WHERE customer_id != ? LIMIT 1", customer["id"])
    variant = shop.in_stock_variant()
    refused = placing(customer["id"], foreign["id"], variant["id"])
    shop.fails("place_order", f"does not belong to customer {customer['id']}", **refused)


def test_a_gift_card_pays_only_if_its_balance_covers_the_total_and_never_goes_negative(shop):
    customer, gift = buyer(shop, "gift_card")
    variant = shop.in_stock_variant()
    shop.arrange("UPDATE payment_methods SET balance_cents = ? WHERE id = ?", variant["price_cents"] - 1, gift["id"])
    shop.fails("place_order", "less than the", **placing(customer["id"], gift["id"], variant["id"]))
    shop.arrange("UPDATE payment_methods SET balance_cents = ? WHERE id = ?", variant["price_cents"], gift["id"])
    shop.ok("place_order", **placing(customer["id"], gift["id"], variant["id"]))
    assert shop.balance(gift["id"]) == 0


def test_an_expired_card_cannot_be_charged(shop):
    card = shop.row(
        "SELECT * FROM payment_methods WHERE kind = 'credit_card' AND exp_year * 100 + exp_month < 202605 LIMIT 1"
    )
    shop.fails("place_order", "expired", **placing(card["customer_id"], card["id"], shop.in_stock_variant()["id"]))


def test_an_order_lists_each_variant_once_and_at_most_ten_lines(shop):
    customer, card = buyer(shop)
    variant = shop.in_stock_variant()
    shop.fails(
        "place_order", "listed more than once", **placing(customer["id"], card["id"], variant["id"], variant["id"])
    )
    result = shop.call("place_order", **placing(customer["id"], card["id"], *[variant["id"]] * 11))
    assert result.is_error and "at most 10 items" in result.error
    result = shop.call("place_order", **placing(customer["id"], card["id"], variant["id"], quantity=0))
    assert result.is_error and "greater than or equal to 1" in result.error


# -- cancelling --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["pending", "processing"])
def test_an_open_order_is_cancelled_with_a_full_refund_and_its_stock_restored(shop, status):
    order = shop.order_with_status(status)
    items = shop.rows("SELECT * FROM order_items WHERE order_id = ?", order["id"])
    stock = {i["variant_id"]: shop.stock(i["variant_id"]) for i in items}
    paid = shop.net_paid(order["id"])
    result = shop.ok("cancel_order", order_id=order["id"], reason="no longer needed")
    assert result.status == "cancelled" and result.cancel_reason == "no longer needed"
    assert shop.net_paid(order["id"]) == 0 and result.total_refunded * 100 == pytest.approx(paid)
    for item in items:
        assert shop.stock(item["variant_id"]) == stock[item["variant_id"]] + item["quantity"]
    assert {i.status for i in result.items} == {"cancelled"}
    refunds = shop.rows("SELECT * FROM payments WHERE order_id = ? AND kind = 'refund'", order["id"])
    assert {r["payment_method_id"] for r in refunds} == {shop.charged_method(order["id"])}


@pytest.mark.parametrize("status", ["shipped", "delivered"])
def test_a_shipped_or_delivered_order_cannot_be_cancelled(shop, status):
    order = shop.order_with_status(status)
    shop.fails(
        "cancel_order",
        f"has status '{status}'; only pending or processing orders can be cancelled",
        order_id=order["id"],
        reason="no longer needed",
    )


def test_a_cancelled_order_cannot_be_cancelled_again_and_reasons_come_from_a_fixed_list(shop):
    order = shop.order_with_status("cancelled")
    shop.fails("cancel_order", "already cancelled", order_id=order["id"], reason="ordered by mistake")
    result = shop.call("cancel_order", order_id=shop.order_with_status("pending")["id"], reason="because")
    assert result.is_error and "no longer needed" in result.error


def test_cancelling_an_order_paid_by_gift_card_credits_the_card_at_once(shop):
    customer, gift = buyer(shop, "gift_card")
    variant = shop.in_stock_variant()
    shop.arrange("UPDATE payment_methods SET balance_cents = 100000 WHERE id = ?", gift["id"])
    order = shop.ok("place_order", **placing(customer["id"], gift["id"], variant["id"]))
    assert shop.balance(gift["id"]) == 100000 - variant["price_cents"]
    cancelled = shop.ok("cancel_order", order_id=order.order_id, reason="ordered by mistake")
    assert shop.balance(gift["id"]) == 100000
    assert [p.status for p in cancelled.payments if p.kind == "refund"] == ["completed"]
    assert shop.stock(variant["id"]) == variant["stock"]


# -- changing a pending order ------------------------------------------------------------------


def test_a_pending_item_changes_to_another_variant_of_the_same_product_and_stock_follows(shop):
    order_id, item = shop.pending_order()
    other = shop.sibling(item["variant_id"], min_stock=2)
    assert other is not None
    old_stock, new_stock = shop.stock(item["variant_id"]), other["stock"]
    card = shop.charged_method(order_id)
    result = shop.ok(
        "modify_pending_order_items", payment_method_id=card, **swapping(order_id, item["id"], other["id"])
    )
    line = next(i for i in result.items if i.item_id == item["id"])
    assert line.variant_id == other["id"] and line.unit_price == other["price_cents"] / 100
    assert line.product_id == item["product_id"]
    assert (shop.stock(item["variant_id"]), shop.stock(other["id"])) == (old_stock + 2, new_stock - 2)
    assert shop.net_paid(order_id) == other["price_cents"] * 2  # the difference was charged or refunded


def test_a_pending_item_cannot_change_into_a_different_product_or_the_same_variant(shop):
    order_id, item = shop.pending_order()
    foreign = shop.in_stock_variant(exclude_product=item["product_id"])
    for item_id, new_variant_id, message in (
        (item["id"], foreign["id"], "only change to another variant of the same product"),
        (item["id"], item["variant_id"], "already is variant"),
        ("itm_nope", item["variant_id"], "Item itm_nope not found"),
    ):
        shop.fails("modify_pending_order_items", message, **swapping(order_id, item_id, new_variant_id))


def test_a_price_difference_needs_a_payment_method(shop):
    order_id, item = shop.pending_order()
    other = next(
        v
        for v in shop.rows(
            "SELECT * FROM variants WHERE product_id = ? AND id != ? AND available AND stock >= 2",
            item["product_id"],
            item["variant_id"],
        )
        if v["price_cents"] != item["unit_price_cents"]
    )
    shop.fails("modify_pending_order_items", "give a payment_method_id", **swapping(order_id, item["id"], other["id"]))


def test_only_pending_orders_can_change_items_or_payment(shop):
    order = shop.order_with_status("processing")
    item = shop.row("SELECT * FROM order_items WHERE order_id = ?", order["id"])
    unchangeable = swapping(order["id"], item["id"], item["variant_id"])
    shop.fails("modify_pending_order_items", "only pending orders can have items changed", **unchangeable)
    method = shop.value("SELECT id FROM payment_methods WHERE customer_id = ? LIMIT 1", order["customer_id"])
    shop.fails(
        "modify_pending_order_payment",
        "only pending orders can change payment method",
        order_id=order["id"],
        payment_method_id=method,
    )


def test_changing_the_payment_method_refunds_the_old_one_and_charges_the_new_one(shop):
    order_id, _ = shop.pending_order()
    customer_id = shop.value("SELECT customer_id FROM orders WHERE id = ?", order_id)
    old = shop.charged_method(order_id)
    gift = shop.gift_card_for(customer_id, balance_cents=1000000)
    paid = shop.net_paid(order_id)
    shop.fails("modify_pending_order_payment", "already paid in full", order_id=order_id, payment_method_id=old)
    result = shop.ok("modify_pending_order_payment", order_id=order_id, payment_method_id=gift)
    by_method = {}
    for p in result.payments:
        by_method[p.payment_method_id] = by_method.get(p.payment_method_id, 0) + (
            p.amount if p.kind == "charge" else -p.amount
        )
    assert by_method == {old: 0, gift: paid / 100}
    assert shop.balance(gift) == 1000000 - paid


def test_the_shipping_address_changes_only_before_the_order_ships(shop):
    order = shop.order_with_status("processing")
    address = {"line1": "1 Infinite Loop", "city": "Cupertino", "state": "CA", "zip": "95014"}
    result = shop.ok("update_order_shipping_address", order_id=order["id"], line2="Suite 5", **address)
    assert (result.shipping_address.line1, result.shipping_address.zip) == ("1 Infinite Loop", "95014")
    shipped = shop.order_with_status("shipped")
    shop.fails("update_order_shipping_address", "has status 'shipped'", order_id=shipped["id"], **address)
    bad = shop.call("update_order_shipping_address", order_id=order["id"], **address | {"state": "California"})
    assert bad.is_error and "state" in bad.error


def test_a_change_list_with_one_bad_line_changes_nothing(shop):
    order_id, item = shop.pending_order()
    customer_id = shop.value("SELECT customer_id FROM orders WHERE id = ?", order_id)
    card = shop.charged_method(order_id)
    second_variant = shop.in_stock_variant(exclude_product=item["product_id"])
    second = shop.ok("place_order", **placing(customer_id, card, second_variant["id"]))
    before = shop.ep.state_hash()
    other = shop.sibling(item["variant_id"], min_stock=2)
    result = shop.call(
        "modify_pending_order_items",
        order_id=order_id,
        payment_method_id=card,
        changes=[
            {"item_id": item["id"], "new_variant_id": other["id"]},
            {"item_id": second.items[0].item_id, "new_variant_id": other["id"]},
        ],
    )
    assert result.is_error and "is not part of order" in result.error
    assert shop.ep.state_hash() == before and result.changes == []
