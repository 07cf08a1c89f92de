"""Authenticating customers, reading their profile, and changing their addresses and gift cards."""

from __future__ import annotations


def a_customer_with_orders(shop):
    return shop.row(
        "SELECT c.* FROM customers c WHERE (SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id) >= 2 "
        "ORDER BY c.id LIMIT 1"
    )


def test_a_customer_is_found_by_email_whatever_its_case(shop):
    customer = a_customer_with_orders(shop)
    found = shop.ok("find_customer_by_email", email=f"  {customer['email'].upper()} ")
    assert found.customer_id == customer["id"] and found.email == customer["email"]


def test_an_unknown_email_is_a_not_found_error(shop):
    shop.fails(
        "find_customer_by_email",
        "No customer has the email address nobody@example.invalid",
        email="nobody@example.invalid",
    )


def test_a_customer_is_found_by_name_and_the_zip_of_any_of_their_addresses(shop):
    address = shop.row(
        "SELECT a.* FROM addresses a JOIN customers c ON c.id = a.customer_id "
        "WHERE a.id != c.default_address_id ORDER BY a.id LIMIT 1"
    )
    customer = shop.row("SELECT * FROM customers WHERE id = ?", address["customer_id"])
    found = shop.ok(
        "find_customer_by_name_zip",
        first_name=customer["first_name"].lower(),
        last_name=customer["last_name"].upper(),
        zip=address["zip"],
    )
    assert found.customer_id == customer["id"]


def test_a_name_with_the_wrong_zip_finds_no_one(shop):
    customer = a_customer_with_orders(shop)
    zips = {a["zip"] for a in shop.rows("SELECT zip FROM addresses WHERE customer_id = ?", customer["id"])}
    wrong = next(z for z in ("00001", "00002", "00003") if z not in zips)
    shop.fails(
        "find_customer_by_name_zip",
        "No customer named",
        first_name=customer["first_name"],
        last_name=customer["last_name"],
        zip=wrong,
    )


def test_a_malformed_zip_is_a_validation_error(shop):
    result = shop.call("find_customer_by_name_zip", first_name="Ann", last_name="Lee", zip="9410")
    assert result.is_error and "zip" in result.error and result.call_seq is None


def test_customer_details_show_addresses_payment_methods_with_balances_and_orders(shop):
    card = shop.row(
        "SELECT * FROM payment_methods WHERE kind = 'gift_card' AND customer_id IS NOT NULL "
        "AND balance_cents > 0 ORDER BY id LIMIT 1"
    )
    customer = shop.row("SELECT * FROM customers WHERE id = ?", card["customer_id"])
    details = shop.ok("get_customer_details", customer_id=customer["id"])
    assert details.email == customer["email"]
    assert details.default_address_id == customer["default_address_id"]
    assert [a.address_id for a in details.addresses if a.is_default] == [customer["default_address_id"]]
    gift = next(m for m in details.payment_methods if m.payment_method_id == card["id"])
    assert gift.kind == "gift_card" and gift.gift_card_balance == card["balance_cents"] / 100
    orders = shop.rows("SELECT id FROM orders WHERE customer_id = ? ORDER BY placed_at DESC", customer["id"])
    assert details.order_count == len(orders)
    assert details.recent_order_ids == [o["id"] for o in orders][:20]


def test_an_unknown_customer_is_a_not_found_error(shop):
    shop.fails("get_customer_details", "Customer cus_0000000 not found", customer_id="cus_0000000")


def test_a_new_address_can_become_the_default_without_touching_existing_orders(shop):
    customer = a_customer_with_orders(shop)
    orders_before = shop.rows("SELECT * FROM orders WHERE customer_id = ?", customer["id"])
    address = {"line1": "742 Evergreen Terrace", "city": "Springfield", "state": "OR", "zip": "97403"}
    added = shop.ok("add_customer_address", customer_id=customer["id"], make_default=True, **address)
    assert added.is_default
    assert shop.value("SELECT default_address_id FROM customers WHERE id = ?", customer["id"]) == added.address_id
    assert shop.rows("SELECT * FROM orders WHERE customer_id = ?", customer["id"]) == orders_before
    same_in_other_case = address | {"line1": "742 EVERGREEN TERRACE", "city": "springfield"}
    known = f"already in the address book as {added.address_id}"
    shop.fails("add_customer_address", known, customer_id=customer["id"], **same_in_other_case)


def test_the_default_address_must_be_one_of_the_customers_own(shop):
    customer, other = shop.rows("SELECT * FROM customers ORDER BY id LIMIT 2")
    foreign = shop.value("SELECT id FROM addresses WHERE customer_id = ? LIMIT 1", other["id"])
    shop.fails(
        "set_default_address",
        f"does not belong to customer {customer['id']}",
        customer_id=customer["id"],
        address_id=foreign,
    )
    shop.fails("set_default_address", "Address adr_nope not found", customer_id=customer["id"], address_id="adr_nope")
    own = shop.rows("SELECT id FROM addresses WHERE customer_id = ? ORDER BY rowid", customer["id"])[-1]["id"]
    assert shop.ok("set_default_address", customer_id=customer["id"], address_id=own).is_default
    assert shop.value("SELECT default_address_id FROM customers WHERE id = ?", customer["id"]) == own


def test_a_gift_card_can_be_redeemed_once_by_one_customer(shop):
    card = shop.row(
        "SELECT * FROM payment_methods WHERE kind = 'gift_card' AND customer_id IS NULL ORDER BY id LIMIT 1"
    )
    first, second = shop.rows("SELECT id FROM customers ORDER BY id LIMIT 2")
    redeemed = shop.ok("redeem_gift_card", customer_id=first["id"], gift_card_code=card["gift_card_code"].lower())
    assert redeemed.payment_method_id == card["id"] and redeemed.gift_card_balance == card["balance_cents"] / 100
    assert shop.value("SELECT customer_id FROM payment_methods WHERE id = ?", card["id"]) == first["id"]
    shop.fails(
        "redeem_gift_card",
        "already on this customer's account",
        customer_id=first["id"],
        gift_card_code=card["gift_card_code"],
    )
    shop.fails(
        "redeem_gift_card",
        "already been redeemed by another account",
        customer_id=second["id"],
        gift_card_code=card["gift_card_code"],
    )
    shop.fails("redeem_gift_card", "is not valid", customer_id=second["id"], gift_card_code="GC-0000-0000-0000")


def test_oversized_strings_are_refused_before_the_tool_runs(shop):
    for tool, arguments in [
        ("find_customer_by_email", {"email": "a" * 300 + "@example.com"}),
        ("get_customer_details", {"customer_id": "c" * 10_000}),
        ("transfer_to_human_agent", {"summary": "x" * 5_000}),
        ("search_products", {"query": "q" * 500}),
    ]:
        result = shop.call(tool, **arguments)
        assert result.is_error and "at most" in result.error and result.call_seq is None, (tool, result.error)
