"""Exchanges and partial refunds after delivery, and what a call leaves behind: its change log,
nothing at all when it fails, the same state when replayed."""

from __future__ import annotations

from mcpsim.engine._episode import Episode

# -- exchanges ---------------------------------------------------------------------------------


def test_an_exchange_keeps_the_product_changes_the_variant_and_moves_stock_both_ways(shop):
    item, other = shop.returnable_item_with_sibling()
    card = shop.charged_method(item["order_id"])
    old_stock, new_stock = shop.stock(item["variant_id"]), other["stock"]
    paid = shop.net_paid(item["order_id"])
    result = shop.ok("exchange_delivered_order_items", **shop.exchange_args(item, other["id"], method=card))
    assert result.status == "exchanged"
    old = next(i for i in result.items if i.item_id == item["id"])
    (new,) = [i for i in result.items if i.replaces_item_id == item["id"]]
    assert old.status == "exchanged" and new.status == "ordered"
    assert new.product_id == old.product_id and new.variant_id == other["id"] != old.variant_id
    assert new.quantity == item["quantity"] and new.unit_price == other["price_cents"] / 100
    q = item["quantity"]
    assert (shop.stock(item["variant_id"]), shop.stock(other["id"])) == (old_stock + q, new_stock - q)
    difference = (other["price_cents"] - item["unit_price_cents"]) * q
    assert shop.net_paid(item["order_id"]) == paid + difference
    (exchange,) = result.exchanges
    assert exchange.price_difference == difference / 100
    kinds = {s.kind: s.status for s in result.shipments if s.shipment_id != item["shipment_id"]}
    assert kinds == {"return": "label_created", "replacement": "label_created"}
    assert exchange.return_tracking_number and exchange.replacement_tracking_number


def test_an_exchange_into_another_product_or_the_same_variant_is_refused(shop):
    item, _ = shop.returnable_item_with_sibling()
    foreign = shop.in_stock_variant(exclude_product=item["product_id"])
    for new_variant, message in (
        (foreign["id"], "an exchange keeps the product and only changes the variant"),
        (item["variant_id"], "an exchange must change the variant"),
    ):
        shop.fails("exchange_delivered_order_items", message, **shop.exchange_args(item, new_variant))


def test_an_exchange_needs_the_new_variant_available_and_in_stock(shop):
    item, other = shop.returnable_item_with_sibling()
    args = shop.exchange_args(item, other["id"])
    shop.arrange("UPDATE variants SET stock = 0 WHERE id = ?", other["id"])
    shop.fails("exchange_delivered_order_items", f"Only 0 unit(s) of variant {other['id']}", **args)
    shop.arrange("UPDATE variants SET stock = 50, available = 0 WHERE id = ?", other["id"])
    shop.fails("exchange_delivered_order_items", "is discontinued", **args)


def test_an_exchange_or_a_return_of_more_units_than_the_line_has_is_refused_naming_the_verb(shop):
    item, other = shop.returnable_item_with_sibling()
    units, too_many = item["quantity"], item["quantity"] + 1
    exchanging = shop.exchange_args(item, other["id"])
    exchanging["items"][0]["quantity"] = too_many
    refused = f"Item {item['id']} has only {units} unit(s); cannot exchange {too_many}"
    shop.fails("exchange_delivered_order_items", refused, **exchanging)
    returning = shop.return_args(item["order_id"], [item["id"]], quantity=too_many)
    refused = f"Item {item['id']} has only {units} unit(s); cannot return {too_many}"
    shop.fails("return_delivered_order_items", refused, **returning)


def test_an_exchanged_item_cannot_be_returned_or_exchanged_again(shop):
    item, other = shop.returnable_item_with_sibling()
    result = shop.ok("exchange_delivered_order_items", **shop.exchange_args(item, other["id"]))
    exchange_id = result.exchanges[0].exchange_id
    returning = shop.return_args(item["order_id"], [item["id"]])
    shop.fails("return_delivered_order_items", f"was already exchanged (exchange {exchange_id})", **returning)
    (new,) = [i for i in result.items if i.replaces_item_id == item["id"]]
    returning = shop.return_args(item["order_id"], [new.item_id])
    shop.fails("return_delivered_order_items", "has not been delivered yet", **returning)


def test_an_exchange_that_fails_at_payment_leaves_no_trace(shop):
    item, other = shop.returnable_item_with_sibling()
    card = shop.charged_method(item["order_id"])
    # Make the new variant dearer and the card expired: the charge fails after every row was written.
    shop.arrange("UPDATE variants SET price_cents = ? WHERE id = ?", item["unit_price_cents"] + 1000, other["id"])
    shop.arrange("UPDATE payment_methods SET kind = 'credit_card', exp_month = 1, exp_year = 2020 WHERE id = ?", card)
    arranged = shop.ep.fork()
    before = shop.ep.state_hash()
    arguments = shop.exchange_args(item, other["id"], method=card)
    failed = shop.ep.call("exchange_delivered_order_items", arguments)
    assert failed.is_error and "expired" in failed.error and not failed.bug
    assert shop.ep.state_hash() == before and shop.ep.changes() == arranged.changes()
    # The failed call is invisible: what follows happens exactly as if it had never been made.
    shop.arrange("UPDATE variants SET price_cents = ? WHERE id = ?", item["unit_price_cents"], other["id"])
    arranged.conn.execute("UPDATE variants SET price_cents = ? WHERE id = ?", (item["unit_price_cents"], other["id"]))
    assert not shop.ep.call("exchange_delivered_order_items", arguments).is_error
    assert not arranged.call("exchange_delivered_order_items", arguments).is_error
    assert shop.ep.tables() == arranged.tables()


# -- partial refunds ---------------------------------------------------------------------------


def test_refunds_never_exceed_what_was_paid_minus_what_was_refunded(shop):
    order = shop.order_with_status("delivered")
    card = shop.charged_method(order["id"])
    paid = shop.net_paid(order["id"])
    damaged = {"method": card, "reason": "damaged item"}
    too_much = shop.refund_args(order["id"], paid / 100 + 0.01, **damaged)
    shop.fails("issue_partial_refund", "exceeds what remains refundable", **too_much)
    shop.ok("issue_partial_refund", **shop.refund_args(order["id"], (paid - 100) / 100, **damaged))
    assert shop.net_paid(order["id"]) == 100
    too_much = shop.refund_args(order["id"], 1.01, method=card)
    shop.fails("issue_partial_refund", "exceeds what remains refundable on order", **too_much)
    shop.ok("issue_partial_refund", **shop.refund_args(order["id"], 1.00, method=card))
    assert shop.net_paid(order["id"]) == 0


def test_a_return_after_a_partial_refund_refunds_only_what_remains(shop):
    order_id, items = shop.delivered_order_with_lines(1)
    paid = shop.net_paid(order_id)
    shop.ok("issue_partial_refund", **shop.refund_args(order_id, (paid - 50) / 100, reason="service recovery"))
    result = shop.ok("return_delivered_order_items", **shop.return_args(order_id, [i["id"] for i in items]))
    assert result.returns[0].refund_amount == 0.5 and shop.net_paid(order_id) == 0


def test_a_partial_refund_needs_a_positive_amount_in_cents_on_a_shipped_order(shop):
    order = shop.order_with_status("shipped")
    for bad in (0, -5):
        result = shop.call("issue_partial_refund", **shop.refund_args(order["id"], bad))
        assert result.is_error and "greater than 0" in result.error
    shop.fails("issue_partial_refund", "fractions of a cent", **shop.refund_args(order["id"], 1.005))
    pending = shop.order_with_status("pending")
    shop.fails("issue_partial_refund", "only shipped or delivered orders", **shop.refund_args(pending["id"], 1))
    refunded = shop.ok("issue_partial_refund", **shop.refund_args(order["id"], 2.5))
    assert [(p.amount, p.reason) for p in refunded.payments if p.kind == "refund"] == [
        (2.5, "partial refund: late delivery")
    ]


# -- what a call leaves behind ----------------------------------------------------------------


def test_a_call_logs_exactly_the_rows_it_changed(shop):
    order = shop.order_with_status("processing")
    result = shop.call("cancel_order", order_id=order["id"], reason="ordered by mistake")
    tables = {c.table for c in result.changes}
    assert tables == {"orders", "order_items", "variants", "payments"} | (
        {"payment_methods"}
        if shop.value("SELECT kind FROM payment_methods WHERE id = ?", shop.charged_method(order["id"])) == "gift_card"
        else set()
    )
    (order_change,) = [c for c in result.changes if c.table == "orders"]
    assert (order_change.before["status"], order_change.after["status"]) == ("processing", "cancelled")


def test_the_same_calls_on_the_same_seed_end_in_the_same_state(retail, templates):
    def play() -> Episode:
        ep = Episode.create(retail, seed=5, scale="small", templates=templates)
        order = ep.query("SELECT id FROM orders WHERE status = 'pending' ORDER BY id LIMIT 1")[0]["id"]
        assert not ep.call("cancel_order", {"order_id": order, "reason": "no longer needed"}).is_error
        assert not ep.call("transfer_to_human_agent", {"summary": "Wants to talk to a manager."}).is_error
        return ep

    assert play().state_hash() == play().state_hash()
