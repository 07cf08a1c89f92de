"""Disputes: card transactions only, within 60 days, once each, posted only; provisional credit;
unauthorized charges need the card blocked first."""

from __future__ import annotations

from typing import Any

import pytest


def _purchase(b, *, days_ago_min: int = 1, days_ago_max: int = 55, card_status: str = "active") -> tuple[str, dict]:
    return b.verified_row(
        "SELECT t.*, a.customer_id FROM transactions t JOIN accounts a ON a.id = t.account_id "
        "JOIN customers c ON c.id = a.customer_id AND c.status = 'active' JOIN cards k ON k.id = t.card_id "
        "WHERE t.kind = 'card_purchase' AND t.status = 'posted' AND k.status = ? "
        "AND t.posted_at BETWEEN datetime('2026-05-15T09:00:00', ?) AND datetime('2026-05-15T09:00:00', ?) "
        "AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.transaction_id = t.id) ORDER BY t.id LIMIT 1",
        card_status,
        f"-{days_ago_max} days",
        f"-{days_ago_min} days",
    )


def _dispute(
    me: str,
    transaction_id: str,
    reason: str = "not_received",
    description: str = "Never arrived at all.",
    **more: Any,
) -> dict[str, Any]:
    """Arguments for open_dispute: the customer `me` disputes a transaction."""
    return {"customer_id": me, "transaction_id": transaction_id, "reason": reason, "description": description, **more}


def test_a_dispute_gives_a_provisional_credit_at_once(b):
    me, txn = _purchase(b)
    balance = b.balance(txn["account_id"])
    dispute = b.ok("open_dispute", **_dispute(me, txn["id"], "not_received", "The order never arrived."))
    charged = -txn["amount_cents"]
    assert (dispute.status, round(dispute.amount * 100), round(dispute.provisional_credit * 100)) == (
        "open",
        charged,
        charged,
    )
    credit = b.row("SELECT * FROM transactions WHERE id = ?", dispute.credit_transaction_id)
    assert (credit["kind"], credit["amount_cents"], credit["status"], credit["account_id"]) == (
        "dispute_credit",
        charged,
        "posted",
        txn["account_id"],
    )
    assert b.balance(txn["account_id"]) == balance + charged
    row = b.row("SELECT * FROM disputes WHERE id = ?", dispute.dispute_id)
    assert (row["transaction_id"], row["card_id"], row["customer_id"]) == (txn["id"], txn["card_id"], me)
    assert b.ok("get_transaction", customer_id=me, transaction_id=txn["id"]).dispute_id == dispute.dispute_id
    b.fails(
        "open_dispute",
        "has already been disputed",
        **_dispute(me, txn["id"], "duplicate_charge", "Charged twice for this."),
    )


def test_a_partial_dispute_credits_only_the_disputed_part(b):
    me, txn = _purchase(b)
    charged = -txn["amount_cents"]
    b.fails(
        "open_dispute",
        "is more than the charge",
        **_dispute(me, txn["id"], "incorrect_amount", "Charged more than agreed.", amount=(charged + 1) / 100),
    )
    dispute = b.ok(
        "open_dispute", **_dispute(me, txn["id"], "incorrect_amount", "Charged more than agreed.", amount=1.25)
    )
    assert dispute.provisional_credit == 1.25


def test_the_60_day_window_counts_from_the_posting_date(b):
    me, old = _purchase(b, days_ago_min=61, days_ago_max=120)
    b.fails("open_dispute", "more than 60 days ago", **_dispute(me, old["id"]))
    me, recent = _purchase(b)
    b.arrange("UPDATE transactions SET posted_at = '2026-03-16T08:59:00+00:00' WHERE id = ?", recent["id"])
    b.fails("open_dispute", "more than 60 days ago", **_dispute(me, recent["id"]))
    b.arrange("UPDATE transactions SET posted_at = '2026-03-16T09:05:00+00:00' WHERE id = ?", recent["id"])
    b.ok("open_dispute", **_dispute(me, recent["id"]))  # a few minutes inside 60 days


def test_only_posted_card_transactions_can_be_disputed(b):
    me, pending = b.verified_row(
        "SELECT t.*, a.customer_id FROM transactions t JOIN accounts a ON a.id = t.account_id "
        "JOIN customers c ON c.id = a.customer_id AND c.status = 'active' "
        "WHERE t.status = 'pending' AND t.kind = 'card_purchase' LIMIT 1"
    )
    b.fails("open_dispute", "is still pending; it can be disputed once it posts", **_dispute(me, pending["id"]))
    for kind in ("transfer_out", "deposit"):
        other = b.value(
            "SELECT t.id FROM transactions t JOIN accounts a ON a.id = t.account_id "
            "WHERE a.customer_id = ? AND t.kind = ? AND t.posted_at > '2026-04-01' LIMIT 1",
            me,
            kind,
        )
        b.fails(
            "open_dispute",
            "only card transactions can be disputed",
            **_dispute(me, other, "not_received", "I want this money back."),
        )


@pytest.mark.parametrize("card_status", ["active"])
def test_an_unauthorized_charge_needs_the_card_frozen_or_replaced_first(b, card_status):
    me, txn = _purchase(b, card_status=card_status)
    args = {
        "customer_id": me,
        "transaction_id": txn["id"],
        "reason": "unauthorized",
        "description": "I never made this purchase.",
    }
    b.fails("open_dispute", "Freeze or replace it before disputing an unauthorized charge", **args)
    b.ok("freeze_card", customer_id=me, card_id=txn["card_id"])
    assert b.ok("open_dispute", **args).reason == "unauthorized"


def test_an_unauthorized_charge_on_a_replaced_card_can_be_disputed(b):
    me, txn = _purchase(b)
    b.ok("replace_card", customer_id=me, card_id=txn["card_id"], reason="stolen")
    assert (
        b.ok("open_dispute", **_dispute(me, txn["id"], "unauthorized", "Card was stolen; not my purchase.")).status
        == "open"
    )


def test_seeded_disputes_are_listed_and_cannot_be_opened_again(b):
    me, dispute = b.verified_row(
        "SELECT d.* FROM disputes d JOIN customers c ON c.id = d.customer_id AND c.status = 'active' "
        "WHERE d.status = 'open' ORDER BY d.id LIMIT 1"
    )
    assert dispute["id"] in [d.dispute_id for d in b.ok("list_disputes", customer_id=me).disputes]
    view = b.ok("get_dispute", customer_id=me, dispute_id=dispute["id"])
    assert view.transaction_id == dispute["transaction_id"] and view.merchant
    b.fails(
        "open_dispute",
        "has already been disputed",
        **_dispute(me, dispute["transaction_id"], "not_received", "Trying this one again."),
    )


def test_a_dispute_on_a_closed_account_is_refused(b):
    me, txn = _purchase(b)
    b.arrange("UPDATE accounts SET status = 'closed' WHERE id = ?", txn["account_id"])
    b.fails("open_dispute", "a provisional credit cannot be given", **_dispute(me, txn["id"]))
