"""The seeded retail data: sizes per scale, determinism, and consistency between an order's status
and its payments, shipments, returns and exchanges."""

from __future__ import annotations

import re

import pytest

from mcpsim.engine._episode import Episode
from tests.support.seed_checks import counts, large_scale_test, other_seed_test, small_built_fast, unindexed


def test_the_small_scale_has_the_declared_sizes_and_builds_fast(retail):
    ep = small_built_fast(retail, 7)
    sizes = counts(ep)
    assert (sizes["customers"], sizes["orders"], sizes["products"]) == (30, 60, 12)
    per_product = ep.query("SELECT COUNT(*) AS n FROM variants GROUP BY product_id")
    assert all(2 <= row["n"] <= 6 for row in per_product)
    assert sizes["order_items"] >= 60 and sizes["payments"] >= 60 and sizes["addresses"] >= 30


@pytest.mark.slow
def test_the_default_scale_is_at_least_tau_bench_retail_size(retail, templates):
    ep = Episode.create(retail, seed=0, scale="default", templates=templates)
    sizes = counts(ep)
    assert sizes["customers"] >= 500 and sizes["orders"] >= 1000 and sizes["products"] >= 50
    assert sizes["variants"] >= 100
    assert_consistent(ep)


def test_seeded_data_looks_real(episode):
    for customer in episode.tables()["customers"]:
        local = customer["email"].split("@")[0]
        first, last = (re.sub(r"[^a-z]", "", n.lower()) for n in (customer["first_name"], customer["last_name"]))
        assert last in local and (first in local or local.startswith(first[0])), customer
        assert re.fullmatch(r"\(\d{3}\) \d{3}-\d{4}", customer["phone"])
    for address in episode.tables()["addresses"]:
        assert re.fullmatch(r"[A-Z]{2}", address["state"]) and re.fullmatch(r"\d{5}", address["zip"])
    for variant in episode.tables()["variants"]:
        assert variant["price_cents"] % 100 == 99 and variant["price_cents"] > 0
    emails = [c["email"] for c in episode.tables()["customers"]]
    assert len(set(emails)) == len(emails)


def test_seeded_orders_agree_with_their_status(episode):
    statuses = {row["status"] for row in episode.query("SELECT DISTINCT status FROM orders")}
    assert {"pending", "processing", "shipped", "delivered", "cancelled"} <= statuses
    assert statuses & {"returned", "partially_returned"} and "exchanged" in statuses
    assert_consistent(episode)


def test_every_column_tools_look_up_by_is_indexed(episode):
    looked_up = {
        "customers": ["email", "last_name"],
        "addresses": ["zip", "customer_id"],
        "payment_methods": ["customer_id", "gift_card_code"],
        "products": ["category", "name"],
        "variants": ["product_id"],
        "orders": ["customer_id", "status"],
        "order_items": ["order_id", "shipment_id", "variant_id"],
        "payments": ["order_id"],
        "shipments": ["order_id", "tracking_number"],
        "returns": ["order_id"],
        "exchanges": ["order_id"],
    }
    assert unindexed(episode, looked_up) == {}


def assert_consistent(ep: Episode) -> None:
    """What every seeded order must satisfy, whatever the scale."""
    q = ep.query
    money = {
        r["order_id"]: r
        for r in q(
            "SELECT order_id, SUM(CASE kind WHEN 'charge' THEN amount_cents END) AS charged, "
            "COALESCE(SUM(CASE kind WHEN 'refund' THEN amount_cents END), 0) AS refunded, "
            "SUM(kind = 'charge' AND status != 'captured') AS uncaptured FROM payments GROUP BY order_id"
        )
    }
    items = {}
    for r in q(
        "SELECT order_id, GROUP_CONCAT(status) AS statuses, SUM(unit_price_cents * quantity) AS value "
        "FROM order_items WHERE replaces_item_id IS NULL GROUP BY order_id"
    ):
        items[r["order_id"]] = r
    outbound = {r["order_id"]: r for r in q("SELECT * FROM shipments WHERE kind = 'outbound'")}
    for order in q("SELECT * FROM orders"):
        oid, status = order["id"], order["status"]
        paid = money[oid]
        assert paid["uncaptured"] == 0 and 0 <= paid["refunded"] <= paid["charged"], order
        statuses = set(items[oid]["statuses"].split(","))
        if status == "cancelled":
            assert paid["refunded"] == paid["charged"] and statuses == {"cancelled"}, order
            assert oid not in outbound and order["cancelled_at"] and order["cancel_reason"]
        elif status in ("pending", "processing"):
            assert paid["refunded"] == 0 and statuses == {"ordered"} and oid not in outbound, order
        elif status == "shipped":
            assert outbound[oid]["status"] in ("in_transit", "out_for_delivery"), order
            assert statuses == {"ordered"}
        else:
            assert outbound[oid]["status"] == "delivered" and outbound[oid]["delivered_at"], order
            if status == "delivered":
                assert statuses == {"ordered"} and paid["refunded"] == 0
            if status == "returned":
                assert statuses == {"returned"}
            if status == "partially_returned":
                assert "returned" in statuses and statuses - {"returned"}
            if status == "exchanged":
                assert "exchanged" in statuses and "returned" not in statuses
    # A return refunds exactly its items; returned lines point at their return.
    for ret in q(
        "SELECT r.id, r.refund_cents, SUM(i.unit_price_cents * i.quantity) AS value, "
        "(SELECT SUM(amount_cents) FROM payments p WHERE p.return_id = r.id) AS refunded "
        "FROM returns r JOIN order_items i ON i.return_id = r.id GROUP BY r.id"
    ):
        assert ret["refund_cents"] == ret["value"] == ret["refunded"], ret
    # An exchange keeps the product: each replacement is another variant of the same product.
    bad = q(
        "SELECT n.id FROM order_items n JOIN order_items o ON o.id = n.replaces_item_id "
        "WHERE n.product_id != o.product_id OR n.variant_id = o.variant_id OR o.status != 'exchanged'"
    )
    assert bad == []
    assert q("SELECT COUNT(*) AS n FROM variants WHERE stock < 0 OR (NOT available AND stock > 0)")[0]["n"] == 0
    assert q("SELECT COUNT(*) AS n FROM payment_methods WHERE balance_cents < 0")[0]["n"] == 0
    assert (
        q("SELECT COUNT(*) AS n FROM payment_methods WHERE kind = 'gift_card' AND balance_cents IS NULL")[0]["n"] == 0
    )


test_the_large_scale_has_tens_of_thousands_of_rows = large_scale_test(
    "retail", "~8 s", assert_consistent, customers=10_000, orders=30_000, products=200
)
test_a_different_seed_builds_different_data = other_seed_test(
    "retail", disjoint={"customers": "email", "orders": "id"}, differ={"products": "name"}
)
