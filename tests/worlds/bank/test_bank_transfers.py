"""Transfers: available balance, the daily limit by virtual-clock day, savings withdrawals,
fraud holds on new payees, cancelling; and payees."""

from __future__ import annotations

TODAY = "2026-05-15"


def test_an_internal_transfer_moves_money_at_once_and_posts_both_legs(b):
    me, checking, savings = b.checking_with_savings()
    before = (b.balance(checking), b.balance(savings))
    transfer = b.ok("transfer_between_own_accounts", **b.between(me, checking, savings, 250.55), memo="rainy day")
    assert transfer.status == "completed" and transfer.amount == 250.55
    assert (b.balance(checking), b.balance(savings)) == (before[0] - 25_055, before[1] + 25_055)
    legs = b.rows(
        "SELECT account_id, amount_cents, status, kind FROM transactions WHERE transfer_id = ? ORDER BY amount_cents",
        transfer.transfer_id,
    )
    assert legs == [
        {"account_id": checking, "amount_cents": -25_055, "status": "posted", "kind": "transfer_out"},
        {"account_id": savings, "amount_cents": 25_055, "status": "posted", "kind": "transfer_in"},
    ]
    b.fails("transfer_between_own_accounts", "are the same", **b.between(me, checking, checking, 1))
    b.fails("transfer_between_own_accounts", "fractions of a cent", **b.between(me, checking, savings, 1.005))


def test_no_transfer_above_the_available_balance_which_excludes_pending_debits(b):
    me, row = b.verified_row(
        "SELECT a.id, a.customer_id FROM accounts a JOIN customers c ON c.id = a.customer_id AND c.status = 'active' "
        "JOIN accounts s ON s.customer_id = a.customer_id AND s.type = 'savings' AND s.status = 'open' "
        "WHERE a.type = 'checking' AND EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = a.id "
        "AND t.status = 'pending') ORDER BY a.id LIMIT 1"
    )
    checking = row["id"]
    savings = b.value("SELECT id FROM accounts WHERE customer_id = ? AND type = 'savings' AND status = 'open'", me)
    pending = -b.value(
        "SELECT SUM(amount_cents) FROM transactions WHERE account_id = ? AND status = 'pending'", checking
    )
    held = b.value(
        "SELECT COALESCE(SUM(amount_cents), 0) FROM transfers WHERE from_account_id = ? AND status = 'held'", checking
    )
    # a small balance so the available balance, not the daily limit, decides
    b.arrange("UPDATE accounts SET balance_cents = ? WHERE id = ?", pending + held + 50_000, checking)
    assert b.available(checking) == 50_000
    b.fails(
        "transfer_between_own_accounts", "more than the available balance", **b.between(me, checking, savings, 500.01)
    )
    assert (
        b.ok(
            "transfer_between_own_accounts", customer_id=me, from_account_id=checking, to_account_id=savings, amount=500
        ).status
        == "completed"
    )
    assert b.available(checking) == 0


def test_the_daily_limit_counts_every_transfer_out_today_and_only_today(b):
    me, checking, savings = b.checking_with_savings()
    limit = b.value("SELECT daily_transfer_limit_cents FROM accounts WHERE id = ?", checking)
    b.arrange("UPDATE accounts SET balance_cents = balance_cents + ? WHERE id = ?", 5 * limit, checking)
    # yesterday's and cancelled transfers do not count; today's completed, pending and held ones do
    b.arrange(
        "INSERT INTO transfers (id, customer_id, kind, from_account_id, to_account_id, amount_cents, memo, "
        "status, created_at, completed_at) VALUES ('trf_y', ?, 'internal', ?, ?, ?, '', 'completed', "
        "'2026-05-14T23:59:59+00:00', '2026-05-14T23:59:59+00:00')",
        me,
        checking,
        savings,
        limit,
    )
    b.arrange(
        "INSERT INTO transfers (id, customer_id, kind, from_account_id, to_account_id, amount_cents, memo, "
        "status, created_at, cancelled_at) VALUES ('trf_c', ?, 'internal', ?, ?, ?, '', 'cancelled', "
        "'2026-05-15T01:00:00+00:00', '2026-05-15T02:00:00+00:00')",
        me,
        checking,
        savings,
        limit,
    )
    first = limit - 10_000
    b.ok("transfer_between_own_accounts", **b.between(me, checking, savings, first / 100))
    account = b.ok("get_account", customer_id=me, account_id=checking)
    assert (account.transferred_today, account.remaining_daily_limit) == (first / 100, 100.0)
    error = b.fails(
        "transfer_between_own_accounts",
        "would exceed the daily transfer limit",
        **b.between(me, checking, savings, 100.01),
    ).error
    assert "at most $100.00 more can go out today" in error
    payee = b.old_payee(me)
    b.fails(
        "transfer_to_payee",
        "would exceed the daily transfer limit",
        customer_id=me,
        from_account_id=checking,
        payee_id=payee,
        amount=100.01,
    )
    assert (
        b.ok("transfer_to_payee", customer_id=me, from_account_id=checking, payee_id=payee, amount=100).status
        == "pending"
    )
    assert b.today_out(checking) == limit


def test_a_seeded_transfer_earlier_today_counts_against_the_limit(b):
    me, row = b.verified_row(
        "SELECT t.from_account_id AS account, t.customer_id, SUM(t.amount_cents) AS used, "
        "a.daily_transfer_limit_cents AS lim FROM transfers t JOIN accounts a ON a.id = t.from_account_id "
        "JOIN customers c ON c.id = t.customer_id AND c.status = 'active' "
        "WHERE t.created_at >= ? AND t.status != 'cancelled' GROUP BY 1, 2 ORDER BY 1 LIMIT 1",
        TODAY,
    )
    b.arrange("UPDATE accounts SET balance_cents = balance_cents + 10000000 WHERE id = ?", row["account"])
    left = row["lim"] - row["used"]
    other = b.value(
        "SELECT id FROM accounts WHERE customer_id = ? AND id != ? AND status = 'open' LIMIT 1", me, row["account"]
    )
    b.fails(
        "transfer_between_own_accounts",
        "would exceed the daily transfer limit",
        **b.between(me, row["account"], other, (left + 1) / 100),
    )
    b.ok("transfer_between_own_accounts", **b.between(me, row["account"], other, left / 100))


def cannot_cancel(b, customer_id: str, transfer_id: str, status: str) -> None:
    why = f"is {status}; only pending or held transfers can be cancelled"
    b.fails("cancel_pending_transfer", why, customer_id=customer_id, transfer_id=transfer_id)


def test_cancelling_a_pending_transfer_restores_the_available_balance_and_the_limit(b):
    me, checking, _ = b.checking_with_savings()
    payee = b.old_payee(me)
    available = b.available(checking)
    transfer = b.ok("transfer_to_payee", customer_id=me, from_account_id=checking, payee_id=payee, amount=700)
    assert transfer.status == "pending" and b.available(checking) == available - 70_000
    line = b.row("SELECT * FROM transactions WHERE transfer_id = ?", transfer.transfer_id)
    assert (line["status"], line["amount_cents"]) == ("pending", -70_000)
    balance = b.balance(checking)
    cancelled = b.ok("cancel_pending_transfer", customer_id=me, transfer_id=transfer.transfer_id)
    assert cancelled.status == "cancelled" and cancelled.cancelled_at
    assert b.value("SELECT status FROM transactions WHERE id = ?", line["id"]) == "cancelled"
    assert b.available(checking) == available and b.balance(checking) == balance and b.today_out(checking) == 0
    cannot_cancel(b, me, transfer.transfer_id, "cancelled")


def test_a_completed_transfer_cannot_be_cancelled(b):
    me, checking, savings = b.checking_with_savings()
    done = b.ok(
        "transfer_between_own_accounts", customer_id=me, from_account_id=checking, to_account_id=savings, amount=20
    )
    cannot_cancel(b, me, done.transfer_id, "completed")


def funded_checking(b) -> tuple[str, str]:
    """(customer, checking): a verified customer's checking account with $10,000 more in it and a
    $20,000 daily transfer limit, room for large transfers."""
    me, checking, _ = b.checking_with_savings()
    b.arrange(
        "UPDATE accounts SET balance_cents = balance_cents + 1000000, daily_transfer_limit_cents = 2000000 "
        "WHERE id = ?",
        checking,
    )
    return me, checking


def test_a_large_transfer_to_a_new_payee_is_held_and_reserves_the_amount(b):
    me, checking = funded_checking(b)
    payee = b.add_payee(me)
    assert b.ok("list_payees", customer_id=me).payees[-1].is_new
    available = b.available(checking)
    at_threshold = b.ok("transfer_to_payee", customer_id=me, from_account_id=checking, payee_id=payee, amount=1000)
    assert at_threshold.status == "pending"  # $1,000.00 is not above the threshold
    held = b.ok("transfer_to_payee", customer_id=me, from_account_id=checking, payee_id=payee, amount=1000.01)
    assert held.status == "held" and "fraud review" in held.hold_reason
    assert b.rows("SELECT * FROM transactions WHERE transfer_id = ?", held.transfer_id) == []  # nothing sent
    account = b.ok("get_account", customer_id=me, account_id=checking)
    assert account.held_transfers == 1000.01 and round(account.available_balance * 100) == available - 200_001
    assert account.transferred_today == 2000.01  # held transfers count toward the daily limit
    b.fails("remove_payee", "cancel it or let it settle", customer_id=me, payee_id=payee)
    b.ok("cancel_pending_transfer", customer_id=me, transfer_id=held.transfer_id)
    assert b.available(checking) == available - 100_000


def test_an_old_payee_gets_large_transfers_without_a_hold_and_a_payee_stops_being_new_after_7_days(b):
    me, checking = funded_checking(b)
    old = b.old_payee(me)
    assert (
        b.ok("transfer_to_payee", customer_id=me, from_account_id=checking, payee_id=old, amount=4000).status
        == "pending"
    )
    payee = b.add_payee(me)
    b.arrange("UPDATE payees SET created_at = '2026-05-08T09:00:00+00:00' WHERE id = ?", payee)  # 7 days + a call
    assert (
        b.ok("transfer_to_payee", customer_id=me, from_account_id=checking, payee_id=payee, amount=4000).status
        == "pending"
    )
    b.arrange("UPDATE payees SET created_at = '2026-05-08T09:10:00+00:00' WHERE id = ?", payee)  # not yet 7 days
    assert (
        b.ok("transfer_to_payee", customer_id=me, from_account_id=checking, payee_id=payee, amount=4000).status
        == "held"
    )


def test_payee_transfers_only_leave_checking_accounts(b):
    me, _, savings = b.checking_with_savings()
    b.fails(
        "transfer_to_payee",
        "can only be sent from a checking account",
        customer_id=me,
        from_account_id=savings,
        payee_id=b.old_payee(me),
        amount=10,
    )


def test_a_savings_account_allows_six_transfers_out_per_calendar_month(b):
    me, checking, savings = b.checking_with_savings()
    b.arrange(
        "INSERT INTO transfers (id, customer_id, kind, from_account_id, to_account_id, amount_cents, memo, "
        "status, created_at, completed_at) VALUES ('trf_april', ?, 'internal', ?, ?, 100, '', 'completed', "
        "'2026-04-30T23:00:00+00:00', '2026-04-30T23:00:00+00:00')",
        me,
        savings,
        checking,
    )
    for _ in range(6):
        b.ok(
            "transfer_between_own_accounts", customer_id=me, from_account_id=savings, to_account_id=checking, amount=10
        )
    assert b.ok("get_account", customer_id=me, account_id=savings).savings_withdrawals_remaining == 0
    b.fails("transfer_between_own_accounts", "at most 6 per calendar month", **b.between(me, savings, checking, 10))
    # money can still come in, and checking has no such limit
    b.ok("transfer_between_own_accounts", **b.between(me, checking, savings, 10))


def test_a_seeded_savings_account_with_six_withdrawals_this_month_is_refused(b):
    me, row = b.verified_row(
        "SELECT t.from_account_id AS savings, t.to_account_id AS checking, t.customer_id FROM transfers t "
        "JOIN accounts a ON a.id = t.from_account_id AND a.type = 'savings' "
        "JOIN customers c ON c.id = t.customer_id AND c.status = 'active' "
        "WHERE t.created_at >= '2026-05-01' GROUP BY 1 HAVING COUNT(*) >= 6 LIMIT 1"
    )
    b.fails(
        "transfer_between_own_accounts",
        "savings accounts allow at most 6",
        **b.between(me, row["savings"], row["checking"], 1),
    )


def test_closed_accounts_neither_send_nor_receive(b):
    me, row = b.verified_row(
        "SELECT a.id AS closed, a.customer_id, o.id AS open FROM accounts a "
        "JOIN accounts o ON o.customer_id = a.customer_id AND o.status = 'open' "
        "JOIN customers c ON c.id = a.customer_id AND c.status = 'active' WHERE a.status = 'closed' LIMIT 1"
    )
    b.fails("transfer_between_own_accounts", "is closed", **b.between(me, row["closed"], row["open"], 1))
    b.fails("transfer_between_own_accounts", "is closed", **b.between(me, row["open"], row["closed"], 1))


def test_a_seeded_held_transfer_can_be_cancelled(b):
    me, held = b.verified_row(
        "SELECT t.* FROM transfers t JOIN customers c ON c.id = t.customer_id AND c.status = 'active' "
        "WHERE t.status = 'held' LIMIT 1"
    )
    view = b.ok("get_transfer", customer_id=me, transfer_id=held["id"])
    assert view.status == "held" and view.payee_name
    assert [t.transfer_id for t in b.ok("list_transfers", customer_id=me, status="held").transfers] == [held["id"]]
    b.ok("cancel_pending_transfer", customer_id=me, transfer_id=held["id"])
    assert b.value("SELECT status FROM transfers WHERE id = ?", held["id"]) == "cancelled"


def test_payees_need_a_valid_routing_number_and_are_not_saved_twice(b):
    me = b.customer()
    b.fails(
        "add_payee",
        "is not a valid ABA routing number",
        **b.payee_args(me, bank_name="Chase", routing_number="021000022"),
    )
    payee = b.add_payee(me, nickname="JT")
    row = b.row("SELECT * FROM payees WHERE id = ?", payee)
    assert (row["status"], row["nickname"], row["created_at"]) == ("active", "JT", "2026-05-15T09:01:00+00:00")
    view = b.ok("list_payees", customer_id=me).payees[-1]
    assert view.account_number == "••••6789" and view.new_until == "2026-05-22T09:01:00+00:00"
    b.fails("add_payee", "is already saved as payee", **b.payee_args(me, name="J. Test", bank_name="Chase"))


def test_a_removed_payee_gets_no_more_transfers(b):
    me, checking, _ = b.checking_with_savings()
    payee = b.add_payee(me)
    removed = b.ok("remove_payee", customer_id=me, payee_id=payee)
    assert removed.status == "removed" and removed.removed_at
    b.fails("remove_payee", "was already removed", customer_id=me, payee_id=payee)
    b.fails("transfer_to_payee", "was removed", customer_id=me, from_account_id=checking, payee_id=payee, amount=5)
    assert payee not in [p.payee_id for p in b.ok("list_payees", customer_id=me).payees]
    assert payee in [p.payee_id for p in b.ok("list_payees", customer_id=me, include_removed=True).payees]


def test_the_payee_count_is_capped(b):
    me = b.customer()
    active = b.value("SELECT COUNT(*) FROM payees WHERE customer_id = ? AND status = 'active'", me)
    for n in range(25 - active):
        b.add_payee(me, account_number=f"9000{n:04d}")
    b.fails(
        "add_payee",
        "already has 25 payees",
        **b.payee_args(
            me,
            name="One More",
            bank_name="Ally Bank",
            routing_number="124003116",
            account_number="55555555",
            account_type="savings",
        ),
    )
