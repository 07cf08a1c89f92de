"""Debit cards: freezing, unfreezing, replacement with a new number, and limits by tier."""

from __future__ import annotations


def _card(b, status: str = "active", tier: str | None = None) -> tuple[str, dict]:
    tier_clause = "AND k.tier = ?" if tier else ""
    params = [status, *([tier] if tier else [])]
    return b.verified_row(
        f"SELECT k.* FROM cards k JOIN customers c ON c.id = k.customer_id AND c.status = 'active' "
        f"WHERE k.status = ? {tier_clause} ORDER BY k.id LIMIT 1",
        *params,
    )


def test_freeze_and_unfreeze_an_active_card(b):
    me, card = _card(b)
    frozen = b.ok("freeze_card", customer_id=me, card_id=card["id"])
    assert frozen.status == "frozen" and frozen.frozen_at == "2026-05-15T09:01:00+00:00"
    b.fails("freeze_card", "is already frozen", customer_id=me, card_id=card["id"])
    active = b.ok("unfreeze_card", customer_id=me, card_id=card["id"])
    assert active.status == "active" and active.frozen_at is None
    b.fails("unfreeze_card", "is not frozen", customer_id=me, card_id=card["id"])


def test_a_frozen_card_cannot_have_its_limits_changed_or_be_replaced_as_damaged(b):
    me, card = _card(b, "frozen")
    b.fails(
        "set_card_limit",
        "is frozen; unfreeze it before changing its limits",
        customer_id=me,
        card_id=card["id"],
        limit_type="purchase",
        amount=card["purchase_limit"] - 100,
    )
    b.fails(
        "replace_card",
        "a frozen card can only be unfrozen or reported lost or stolen",
        customer_id=me,
        card_id=card["id"],
        reason="damaged",
    )
    replaced = b.ok("replace_card", customer_id=me, card_id=card["id"], reason="stolen")
    assert replaced.old_card.status == "closed" and replaced.old_card.closed_reason == "stolen"
    assert replaced.old_card.frozen_at is None


def test_replacing_a_card_closes_the_old_one_and_issues_a_new_number_on_the_same_account(b):
    me, card = _card(b)
    result = b.ok("replace_card", customer_id=me, card_id=card["id"], reason="lost")
    new = b.row("SELECT * FROM cards WHERE id = ?", result.new_card.card_id)
    old = b.row("SELECT * FROM cards WHERE id = ?", card["id"])
    assert (old["status"], old["closed_reason"], old["replaced_by_card_id"]) == ("closed", "lost", new["id"])
    assert old["closed_at"] == "2026-05-15T09:01:00+00:00"
    assert new["number"] != old["number"] and new["last4"] == new["number"][-4:] and len(new["number"]) == 16
    assert new["number"].startswith("4147")  # the bank's BIN plus seeded digits
    assert (new["account_id"], new["tier"], new["status"], new["replaces_card_id"]) == (
        card["account_id"],
        card["tier"],
        "active",
        card["id"],
    )
    assert (new["purchase_limit"], new["atm_limit"], new["expires"]) == (
        card["purchase_limit"],
        card["atm_limit"],
        "05/2030",
    )
    assert result.fee == 0 and result.fee_transaction_id is None
    for tool, args in (
        ("freeze_card", {}),
        ("unfreeze_card", {}),
        ("replace_card", {"reason": "lost"}),
        ("set_card_limit", {"limit_type": "atm", "amount": 100}),
    ):
        b.fails(tool, "is closed", customer_id=me, card_id=card["id"], **args)
    assert [c.card_id for c in b.ok("list_cards", customer_id=me).cards].count(new["id"]) == 1
    assert card["id"] not in [c.card_id for c in b.ok("list_cards", customer_id=me).cards]


def test_expedited_delivery_costs_25_dollars_except_for_platinum(b):
    me, card = _card(b, tier="standard")
    balance = b.balance(card["account_id"])
    result = b.ok("replace_card", customer_id=me, card_id=card["id"], reason="damaged", delivery="expedited")
    assert result.fee == 25.0 and b.balance(card["account_id"]) == balance - 2_500
    fee = b.row("SELECT * FROM transactions WHERE id = ?", result.fee_transaction_id)
    assert (fee["kind"], fee["amount_cents"], fee["status"], fee["account_id"]) == (
        "fee",
        -2_500,
        "posted",
        card["account_id"],
    )
    me, platinum = _card(b, tier="platinum")
    balance = b.balance(platinum["account_id"])
    result = b.ok("replace_card", customer_id=me, card_id=platinum["id"], reason="lost", delivery="expedited")
    assert result.fee == 0 and b.balance(platinum["account_id"]) == balance


def test_the_expedited_fee_needs_the_available_balance(b):
    me, card = _card(b, tier="standard")
    pending = b.value(
        "SELECT COALESCE(-SUM(amount_cents), 0) FROM transactions WHERE account_id = ? AND status = 'pending'",
        card["account_id"],
    )
    held = b.value(
        "SELECT COALESCE(SUM(amount_cents), 0) FROM transfers WHERE from_account_id = ? AND status = 'held'",
        card["account_id"],
    )
    b.arrange("UPDATE accounts SET balance_cents = ? WHERE id = ?", pending + held + 2_499, card["account_id"])
    b.fails(
        "replace_card",
        "does not cover the $25.00 expedited delivery fee",
        customer_id=me,
        card_id=card["id"],
        reason="lost",
        delivery="expedited",
    )
    assert b.ok("replace_card", customer_id=me, card_id=card["id"], reason="lost").fee == 0


def test_card_limits_stay_within_the_tiers_maximum_and_the_minimum(b):
    for tier, purchase_max, atm_max in (("standard", 3_000, 500), ("gold", 6_000, 1_000), ("platinum", 10_000, 1_500)):
        me, card = _card(b, tier=tier)
        for kind, most in (("purchase", purchase_max), ("atm", atm_max)):
            error = f"above the maximum daily {kind} limit of ${most:,} for a {tier} card"
            b.fails("set_card_limit", error, customer_id=me, card_id=card["id"], limit_type=kind, amount=most + 1)
        if card["purchase_limit"] != purchase_max:
            assert (
                b.ok(
                    "set_card_limit", customer_id=me, card_id=card["id"], limit_type="purchase", amount=purchase_max
                ).purchase_limit
                == purchase_max
            )
        view = b.ok("set_card_limit", customer_id=me, card_id=card["id"], limit_type="atm", amount=20)
        assert view.atm_limit == 20 and view.max_atm_limit == atm_max
    b.fails(
        "set_card_limit", "cannot be below $100", customer_id=me, card_id=card["id"], limit_type="purchase", amount=99
    )
    b.fails("set_card_limit", "cannot be below $20", customer_id=me, card_id=card["id"], limit_type="atm", amount=19)
    b.fails("set_card_limit", "is already $20", customer_id=me, card_id=card["id"], limit_type="atm", amount=20)


def test_closed_cards_are_listed_only_on_request(b):
    me, card = b.verified_row(
        "SELECT k.* FROM cards k JOIN customers c ON c.id = k.customer_id AND c.status = 'active' "
        "WHERE k.status = 'closed' LIMIT 1"
    )
    assert card["id"] not in [c.card_id for c in b.ok("list_cards", customer_id=me).cards]
    closed = next(c for c in b.ok("list_cards", customer_id=me, include_closed=True).cards if c.card_id == card["id"])
    assert closed.replaced_by_card_id == card["replaced_by_card_id"]


def test_a_replacement_number_comes_from_the_seeded_id_generator(new_bank):
    numbers = []
    for _ in range(2):
        b = new_bank()
        me, card = _card(b)
        result = b.ok("replace_card", customer_id=me, card_id=card["id"], reason="lost")
        numbers.append(b.value("SELECT number FROM cards WHERE id = ?", result.new_card.card_id))
        assert numbers[-1] not in [
            r["number"] for r in b.rows("SELECT number FROM cards WHERE id != ?", result.new_card.card_id)
        ]
    assert numbers[0] == numbers[1]  # the same episode state draws the same number
