"""Returns of delivered items: the return window, refunds to the right place, restocking, and
never returning a line twice."""

from __future__ import annotations


def test_returning_every_item_refunds_the_original_payment_and_restocks(shop):
    order_id, items = shop.delivered_order_with_lines()
    card = shop.charged_method(order_id)
    stock = {i["variant_id"]: shop.stock(i["variant_id"]) for i in items}
    value = sum(i["unit_price_cents"] * i["quantity"] for i in items)
    returning = shop.return_args(order_id, [i["id"] for i in items], method=card, reason="no longer needed")
    result = shop.ok("return_delivered_order_items", **returning)
    assert result.status == "returned" and {i.status for i in result.items} == {"returned"}
    (ret,) = result.returns
    assert ret.refund_amount == value / 100 and sorted(ret.item_ids) == sorted(i["id"] for i in items)
    assert ret.return_tracking_number
    refund = shop.row("SELECT * FROM payments WHERE return_id = ?", ret.return_id)
    assert (refund["payment_method_id"], refund["amount_cents"], refund["status"]) == (card, value, "pending")
    assert shop.net_paid(order_id) == 0
    for item in items:
        assert shop.stock(item["variant_id"]) == stock[item["variant_id"]] + item["quantity"]


def test_returning_some_items_leaves_the_order_partially_returned(shop):
    order_id, items = shop.delivered_order_with_lines()
    result = shop.ok("return_delivered_order_items", **shop.return_args(order_id, [items[0]["id"]]))
    assert result.status == "partially_returned"
    assert shop.net_paid(order_id) == sum(
        i.unit_price * i.quantity * 100 for i in result.items if i.status == "ordered"
    )


def test_items_cannot_be_returned_twice(shop):
    order_id, items = shop.delivered_order_with_lines()
    first_line = shop.return_args(order_id, [items[0]["id"]])
    first = shop.ok("return_delivered_order_items", **first_line)
    returned = f"Item {items[0]['id']} was already returned (return {first.returns[0].return_id})"
    shop.fails("return_delivered_order_items", returned, **first_line)
    twice = shop.return_args(order_id, [items[1]["id"]] * 2)
    shop.fails("return_delivered_order_items", "listed more than once", **twice)


def test_part_of_a_line_can_be_returned_and_the_rest_later_but_never_more(shop):
    item = next(i for i in shop.returnable_items() if i["quantity"] >= 2)
    order_id, line = item["order_id"], [item["id"]]
    too_many = shop.return_args(order_id, line, quantity=item["quantity"] + 1)
    shop.fails("return_delivered_order_items", f"has only {item['quantity']} unit(s)", **too_many)
    result = shop.ok("return_delivered_order_items", **shop.return_args(order_id, line, quantity=1))
    kept = next(i for i in result.items if i.item_id == item["id"])
    (split,) = [i for i in result.items if i.return_id and i.variant_id == item["variant_id"]]
    assert (kept.quantity, kept.status, split.quantity, split.status) == (
        item["quantity"] - 1,
        "ordered",
        1,
        "returned",
    )
    assert result.returns[0].refund_amount == item["unit_price_cents"] / 100
    rest = shop.ok("return_delivered_order_items", **shop.return_args(order_id, line))
    assert len(rest.returns) == 2
    shop.fails("return_delivered_order_items", "already returned", **shop.return_args(order_id, line))


def test_only_delivered_orders_can_have_items_returned(shop):
    for status in ("pending", "processing", "shipped", "cancelled"):
        order = shop.order_with_status(status)
        item = shop.row("SELECT id FROM order_items WHERE order_id = ?", order["id"])
        returning = shop.return_args(order["id"], [item["id"]])
        shop.fails("return_delivered_order_items", f"has status '{status}'; only delivered orders", **returning)


def test_items_delivered_more_than_30_days_ago_cannot_be_returned(shop):
    item = shop.row(
        "SELECT i.* FROM order_items i JOIN orders o ON o.id = i.order_id JOIN shipments s ON s.id = i.shipment_id "
        "WHERE o.status = 'delivered' AND s.delivered_at < '2026-04-10' LIMIT 1"
    )
    returning = shop.return_args(item["order_id"], [item["id"]])
    shop.fails("return_delivered_order_items", "the return window has closed", **returning)


def test_an_item_of_another_order_is_refused(shop):
    (order_a, _), order_b = shop.delivered_order_with_lines(1), shop.order_with_status("processing")
    foreign = shop.row("SELECT id FROM order_items WHERE order_id = ?", order_b["id"])
    shop.fails(
        "return_delivered_order_items", f"is not part of order {order_a}", **shop.return_args(order_a, [foreign["id"]])
    )


def test_a_refund_goes_only_to_a_method_that_paid_or_to_a_gift_card(shop):
    order_id, items = shop.delivered_order_with_lines(1)
    customer_id = shop.value("SELECT customer_id FROM orders WHERE id = ?", order_id)
    paid_with = shop.charged_method(order_id)
    shop.arrange(
        "INSERT INTO payment_methods (id, customer_id, kind, brand, last4, exp_month, exp_year, created_at) "
        "VALUES ('pm_card_test', ?, 'credit_card', 'Visa', '1111', 1, 2030, '2026-01-01T00:00:00+00:00')",
        customer_id,
    )
    assert paid_with != "pm_card_test"
    line = [items[0]["id"]]
    unpaid = shop.return_args(order_id, line, method="pm_card_test")
    shop.fails("return_delivered_order_items", "did not pay for order", **unpaid)
    other_customer = shop.row("SELECT * FROM payment_methods WHERE customer_id != ? LIMIT 1", customer_id)
    foreign = shop.return_args(order_id, line, method=other_customer["id"])
    shop.fails("return_delivered_order_items", "does not belong to customer", **foreign)
    gift = shop.gift_card_for(customer_id, 500)
    value = items[0]["unit_price_cents"] * items[0]["quantity"]
    result = shop.ok("return_delivered_order_items", **shop.return_args(order_id, line, method=gift))
    assert shop.balance(gift) == 500 + value
    assert [p.status for p in result.payments if p.kind == "refund"] == ["completed"]


def test_the_return_label_does_not_depend_on_how_many_calls_came_before(shop, retail, templates):
    from mcpsim.engine._episode import Episode

    order_id, items = shop.delivered_order_with_lines()
    arguments = shop.return_args(order_id, [items[0]["id"]], reason="no longer needed")
    labels = []
    for extra_reads in range(5):
        ep = Episode.restore(retail, shop.ep.snapshot())
        for _ in range(extra_reads):
            ep.call("get_order_details", {"order_id": order_id})
        result = ep.call("return_delivered_order_items", arguments)
        assert not result.is_error, result.error
        tracking = result.value.returns[-1].return_tracking_number
        labels.append(ep.query("SELECT carrier FROM shipments WHERE tracking_number = ?", (tracking,))[0]["carrier"])
    assert all(label == labels[0] for label in labels)
