"""What the retail world declares through the world SDK: its id formats and the labels of its
not-found errors (its irreversible tools and version: tests/worlds/test_world_folders.py)."""

from __future__ import annotations

import re

from mcpsim_worlds.retail.tables import OrderItem, PaymentMethod

from mcpsim.world import World


def test_the_calculator_is_the_standard_one_with_the_retail_example(retail: World) -> None:
    calculate = retail.tools["calculate"]
    assert calculate.read_only and calculate.idempotent
    assert calculate.description.endswith("Use it for totals, price differences and refunds.")
    assert "'(49.99 * 2) - 10'" in calculate.input_schema()["properties"]["expression"]["description"]


def test_new_ids_follow_the_declared_formats(retail: World, shop) -> None:
    assert retail.id_formats["order"] == ("#W", 7) and retail.id_formats["gift_card"] == ("", 12)
    order_id, item = shop.pending_order()
    payment = shop.row("SELECT id FROM payments WHERE order_id = ?", order_id)
    assert re.fullmatch(r"#W\d{7}", order_id)
    assert re.fullmatch(r"itm_\d{8}", item["id"])
    assert re.fullmatch(r"txn_\d{8}", payment["id"])
    ticket = shop.ok("transfer_to_human_agent", summary="The customer wants a custom engraving.", order_id=order_id)
    assert re.fullmatch(r"tkt_\d{7}", ticket.ticket_id)


def test_a_label_names_the_row_in_errors_and_is_not_a_column(retail: World) -> None:
    assert (PaymentMethod.__label__, OrderItem.__label__) == ("Payment method", "Item")
    assert "__label__" not in PaymentMethod.__table__.columns  # type: ignore[attr-defined]
    assert "label" not in retail.schema_sql


def test_not_found_errors_name_what_is_missing(shop) -> None:
    order_id, item = shop.pending_order()
    shop.fails("get_customer_details", "Customer cus_0000000 not found", customer_id="cus_0000000")
    shop.fails("get_product_details", "Product prod_000000 not found", product_id="prod_000000")
    shop.fails("get_order_details", "Order W0000000 not found", order_id="W0000000")  # as given, not as looked up
    shop.fails(
        "modify_pending_order_payment",
        "Payment method pm_0000000 not found",
        order_id=order_id,
        payment_method_id="pm_0000000",
    )
    shop.fails(
        "modify_pending_order_items",
        "Item itm_00000000 not found",
        order_id=order_id,
        changes=[{"item_id": "itm_00000000", "new_variant_id": item["variant_id"]}],
    )
    shop.fails(
        "modify_pending_order_items",
        "Variant var_00000000 not found",
        order_id=order_id,
        changes=[{"item_id": item["id"], "new_variant_id": "var_00000000"}],
    )
