"""Accounts, transaction history and monthly statements (closed periods only)."""

from __future__ import annotations


def _account(b, where: str = "1") -> tuple[str, dict]:
    return b.verified_row(
        f"SELECT a.* FROM accounts a JOIN customers c ON c.id = a.customer_id AND c.status = 'active' "
        f"WHERE a.status = 'open' AND a.opened_at < '2025-11-01' AND {where} ORDER BY a.id LIMIT 1"
    )


def test_statements_chain_and_add_up(b):
    me, account = _account(b, "a.type = 'checking'")
    previous = None
    for period in ("2025-11", "2025-12", "2026-01", "2026-02", "2026-03", "2026-04"):
        statement = b.ok("get_statement", customer_id=me, account_id=account["id"], period=period, limit=100)
        assert (
            round(statement.opening_balance + statement.total_credits + statement.total_debits, 2)
            == statement.closing_balance
        )
        lines = b.rows(
            "SELECT amount_cents FROM transactions WHERE account_id = ? AND status = 'posted' "
            "AND posted_at >= ? AND posted_at < ?",
            account["id"],
            statement.period_start,
            f"{period[:4]}-{int(period[5:]) + 1:02d}-01" if period[5:] != "12" else "2026-01-01",
        )
        assert statement.transaction_count == len(lines)
        assert round(statement.total_credits * 100) == sum(r["amount_cents"] for r in lines if r["amount_cents"] > 0)
        assert len(statement.transactions) == min(len(lines), 100)
        if previous is not None:
            assert statement.opening_balance == previous.closing_balance
        previous = statement
    # the last closing balance plus May's posted lines is today's balance
    may = b.value(
        "SELECT COALESCE(SUM(amount_cents), 0) FROM transactions WHERE account_id = ? "
        "AND status = 'posted' AND posted_at >= '2026-05-01'",
        account["id"],
    )
    assert round(previous.closing_balance * 100) + may == b.balance(account["id"])
    assert previous.period_end == "2026-04-30" and previous.number == "••••" + account["number"][-4:]


def test_only_closed_periods_of_the_last_six_months_have_statements(b):
    me, account = _account(b)
    b.fails(
        "get_statement",
        "The 2026-05 statement period is not closed yet (it closes on 2026-05-31)",
        customer_id=me,
        account_id=account["id"],
        period="2026-05",
    )
    b.fails("get_statement", "not closed yet", customer_id=me, account_id=account["id"], period="2026-07")
    b.fails(
        "get_statement",
        "Only the last 6 monthly statements are available (2025-11 to 2026-04)",
        customer_id=me,
        account_id=account["id"],
        period="2025-10",
    )
    assert b.ok("get_statement", customer_id=me, account_id=account["id"], period="2025-11").period == "2025-11"


def test_no_statement_before_an_account_was_opened_or_after_it_closed(b):
    me, account = b.verified_row(
        "SELECT a.* FROM accounts a JOIN customers c ON c.id = a.customer_id AND c.status = 'active' "
        "WHERE a.opened_at >= '2025-12-01' AND a.opened_at < '2026-04-01' ORDER BY a.id LIMIT 1"
    )
    b.fails("get_statement", "after the 2025-11 period", customer_id=me, account_id=account["id"], period="2025-11")
    month = account["opened_at"][:7]
    first = b.ok("get_statement", customer_id=me, account_id=account["id"], period=month)
    assert first.opening_balance == 0
    b.arrange(
        "UPDATE accounts SET status = 'closed', closed_at = '2026-03-10T10:00:00+00:00' WHERE id = ?", account["id"]
    )
    b.fails("get_statement", "before the 2026-04 period", customer_id=me, account_id=account["id"], period="2026-04")


def test_accounts_show_available_balance_pending_debits_and_todays_transfers(b):
    me, account = b.verified_row(
        "SELECT a.* FROM accounts a JOIN customers c ON c.id = a.customer_id AND c.status = 'active' "
        "WHERE EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = a.id AND t.status = 'pending') "
        "ORDER BY a.id LIMIT 1"
    )
    view = b.ok("get_account", customer_id=me, account_id=account["id"])
    pending = -b.value(
        "SELECT SUM(amount_cents) FROM transactions WHERE account_id = ? AND status = 'pending'", account["id"]
    )
    held = b.value(
        "SELECT COALESCE(SUM(amount_cents), 0) FROM transfers WHERE from_account_id = ? AND status = 'held'",
        account["id"],
    )
    assert round(view.pending_debits * 100) == pending and round(view.held_transfers * 100) == held
    assert round(view.available_balance * 100) == account["balance_cents"] - pending - held
    assert view.number == "••••" + account["number"][-4:] and account["number"] not in str(view)
    listed = b.ok("list_accounts", customer_id=me)
    assert account["id"] in [a.account_id for a in listed.accounts]
    assert all(a.status == "open" for a in listed.accounts)


def test_transactions_filter_page_and_flag_disputes(b):
    me, account = _account(b, "a.type = 'checking'")
    everything = b.ok("list_transactions", customer_id=me, account_id=account["id"], limit=50)
    total = b.value("SELECT COUNT(*) FROM transactions WHERE account_id = ?", account["id"])
    assert everything.total_count == total and len(everything.transactions) == min(total, 50)
    dates = [t.posted_at for t in everything.transactions]
    assert dates == sorted(dates, reverse=True)
    page = b.ok("list_transactions", customer_id=me, account_id=account["id"], limit=5, offset=5)
    assert [t.transaction_id for t in page.transactions] == [t.transaction_id for t in everything.transactions[5:10]]
    april = b.ok(
        "list_transactions",
        customer_id=me,
        account_id=account["id"],
        start_date="2026-04-01",
        end_date="2026-04-30",
        kind="card_purchase",
        limit=50,
    )
    assert april.transactions and all(
        t.posted_at[:7] == "2026-04" and t.kind == "card_purchase" for t in april.transactions
    )
    merchant = april.transactions[0].merchant
    found = b.ok("list_transactions", customer_id=me, account_id=account["id"], search=merchant.lower()[:6], limit=50)
    assert found.total_count >= 1 and all(
        merchant.lower()[:6] in (t.merchant or "").lower() + " " + t.description.lower() for t in found.transactions
    )
    assert b.ok("list_transactions", customer_id=me, account_id=account["id"], search="%%").total_count == 0
    result = b.call("list_transactions", customer_id=me, account_id=account["id"], limit=51)
    assert result.is_error and "less than or equal to 50" in result.error
    b.fails("list_transactions", "is not a valid date", customer_id=me, account_id=account["id"], end_date="2026-02-30")


def test_a_transfer_to_a_human_opens_a_ticket_without_verification(b):
    c = b.row("SELECT * FROM customers WHERE status = 'restricted' LIMIT 1")
    ticket = b.ok(
        "transfer_to_human_agent",
        topic="restricted_profile",
        customer_id=c["id"],
        summary="Restricted profile; caller wants to check a balance.",
    )
    row = b.row("SELECT * FROM tickets WHERE id = ?", ticket.ticket_id)
    assert (row["customer_id"], row["topic"], row["status"]) == (c["id"], "restricted_profile", "open")
    b.fails(
        "transfer_to_human_agent",
        "Customer cus_0000000 not found",
        topic="other",
        customer_id="cus_0000000",
        summary="Someone unknown.",
    )
