"""Finding and verifying a customer, the identity gate in front of every customer tool, the
walls between customers, and contact details."""

from __future__ import annotations

import pytest

GATED = {
    "get_customer_profile": {},
    "update_contact_info": {"phone": "415-555-0134"},
    "list_accounts": {},
    "get_account": {"account_id": "{account}"},
    "list_transactions": {"account_id": "{account}"},
    "get_transaction": {"transaction_id": "{transaction}"},
    "get_statement": {"account_id": "{account}", "period": "2026-04"},
    "list_cards": {},
    "freeze_card": {"card_id": "{card}"},
    "unfreeze_card": {"card_id": "{card}"},
    "replace_card": {"card_id": "{card}", "reason": "damaged"},
    "set_card_limit": {"card_id": "{card}", "limit_type": "atm", "amount": 200},
    "list_payees": {},
    "add_payee": {
        "name": "Jordan Test",
        "bank_name": "JPMorgan Chase Bank",
        "routing_number": "021000021",
        "account_number": "123456789",
        "account_type": "checking",
    },
    "remove_payee": {"payee_id": "{payee}"},
    "transfer_between_own_accounts": {"from_account_id": "{account}", "to_account_id": "{savings}", "amount": 10},
    "transfer_to_payee": {"from_account_id": "{account}", "payee_id": "{payee}", "amount": 10},
    "list_transfers": {},
    "get_transfer": {"transfer_id": "{transfer}"},
    "cancel_pending_transfer": {"transfer_id": "{transfer}"},
    "open_dispute": {"transaction_id": "{purchase}", "reason": "not_received", "description": "Never got the goods."},
    "list_disputes": {},
    "get_dispute": {"dispute_id": "dsp_0000000"},
}


def test_every_tool_that_touches_customer_data_is_gated_by_verification(bank):
    takes_customer = {n for n, s in bank.tools.items() if any(p.name == "customer_id" for p in s.parameters)}
    assert takes_customer - {"verify_identity", "transfer_to_human_agent"} == set(GATED)
    assert len(bank.tools) >= 18


def _ids(b) -> dict[str, str]:
    row = b.row(
        "SELECT a.customer_id, a.id AS account, s.id AS savings, k.id AS card, p.id AS payee, t.id AS transfer "
        "FROM accounts a JOIN accounts s ON s.customer_id = a.customer_id AND s.type = 'savings' "
        "JOIN cards k ON k.account_id = a.id JOIN payees p ON p.customer_id = a.customer_id "
        "JOIN transfers t ON t.customer_id = a.customer_id JOIN customers c ON c.id = a.customer_id "
        "WHERE a.type = 'checking' AND c.status = 'active' ORDER BY a.id LIMIT 1"
    )
    row["transaction"] = row["purchase"] = b.value(
        "SELECT id FROM transactions WHERE account_id = ? AND kind = 'card_purchase' ORDER BY posted_at DESC LIMIT 1",
        row["account"],
    )
    return row


@pytest.mark.parametrize("tool", sorted(GATED))
def test_a_tool_refuses_an_unverified_customer_and_changes_nothing(b, tool):
    ids = _ids(b)
    args = {k: v.format(**ids) if isinstance(v, str) else v for k, v in GATED[tool].items()}
    b.fails(tool, "has not verified their identity in this session", customer_id=ids["customer_id"], **args)


def test_verification_checks_date_of_birth_and_ssn_and_unlocks_the_customer(b):
    c = b.row("SELECT * FROM customers WHERE status = 'active' ORDER BY id LIMIT 1")
    wrong = b.ok("verify_identity", **b.answers(c["id"], ssn_last4="0000" if c["ssn_last4"] != "0000" else "1111"))
    assert not wrong.verified and wrong.attempts_remaining == 2
    b.fails("list_accounts", "has not verified", customer_id=c["id"])
    row = b.row("SELECT * FROM identity_verifications WHERE customer_id = ?", c["id"])
    assert (row["status"], row["failed_attempts"]) == ("unverified", 1)
    right = b.ok("verify_identity", **b.answers(c["id"]))
    assert right.verified
    row = b.row("SELECT * FROM identity_verifications WHERE customer_id = ?", c["id"])
    assert (row["status"], row["failed_attempts"], row["method"]) == ("verified", 0, "dob_ssn4")
    assert b.ok("list_accounts", customer_id=c["id"]).accounts
    again = b.ok("verify_identity", customer_id=c["id"], date_of_birth="1900-01-01", ssn_last4="0000")
    assert again.verified  # already verified: a second check changes nothing


def test_a_wrong_date_of_birth_alone_fails(b):
    c = b.row("SELECT * FROM customers WHERE status = 'active' ORDER BY id LIMIT 1")
    result = b.ok("verify_identity", **b.answers(c["id"], date_of_birth="1901-02-03"))
    assert not result.verified


def test_three_failures_lock_verification_even_for_the_right_details(b):
    c = b.row("SELECT * FROM customers WHERE status = 'active' ORDER BY id LIMIT 1")
    for left in (2, 1, 0):
        result = b.ok("verify_identity", **b.answers(c["id"], date_of_birth="1901-02-03"))
        assert not result.verified and result.attempts_remaining == left
    assert result.status == "locked"
    b.fails("verify_identity", "is locked after 3 failed attempts", **b.answers(c["id"]))
    b.fails("list_accounts", "is locked after repeated failed attempts", customer_id=c["id"])
    ticket = b.ok(
        "transfer_to_human_agent",
        topic="locked_verification",
        customer_id=c["id"],
        summary="Caller failed verification three times.",
    )
    assert b.row("SELECT * FROM tickets WHERE id = ?", ticket.ticket_id)["topic"] == "locked_verification"


def test_a_restricted_profile_cannot_be_verified_or_served(b):
    c = b.row("SELECT * FROM customers WHERE status = 'restricted' ORDER BY id LIMIT 1")
    b.fails("verify_identity", "restricted by the fraud team", **b.answers(c["id"]))
    b.arrange("UPDATE identity_verifications SET status = 'verified' WHERE customer_id = ?", c["id"])
    b.fails("list_accounts", "profile is restricted", customer_id=c["id"])


def test_find_customer_by_email_phone_or_name_and_zip(b):
    c = b.row("SELECT * FROM customers ORDER BY id LIMIT 1")
    assert [m.customer_id for m in b.ok("find_customer", email=c["email"].upper()).matches] == [c["id"]]
    area, mid, last = c["phone"].split("-")
    assert b.ok("find_customer", phone=f"+1 ({area}) {mid} {last}").matches[0].customer_id == c["id"]
    found = b.ok("find_customer", first_name=c["first_name"].lower(), last_name=c["last_name"].upper(), zip=c["zip"])
    assert found.matches[0].customer_id == c["id"] and not found.matches[0].verified
    b.fails("find_customer", "Give exactly one of", email=c["email"], phone=c["phone"])
    b.fails("find_customer", "Give exactly one of")
    b.fails("find_customer", "needs first_name, last_name and zip together", first_name=c["first_name"], zip=c["zip"])
    b.fails("find_customer", "No customer matches", email="nobody@example.com")
    b.fails("find_customer", "not a 10-digit US phone number", phone="555-555-01345")


def test_another_customers_accounts_cards_payees_transfers_and_disputes_are_unreachable(b):
    ids = _ids(b)
    me = b.customer("c.id != ?", ids["customer_id"])
    b.verify(ids["customer_id"])  # even with both verified, each acts only on their own
    dispute = b.value("SELECT id FROM disputes WHERE customer_id != ? LIMIT 1", me)
    for tool, args, what in (
        ("get_account", {"account_id": ids["account"]}, "has no account"),
        ("list_transactions", {"account_id": ids["account"]}, "has no account"),
        ("get_statement", {"account_id": ids["account"], "period": "2026-04"}, "has no account"),
        ("get_transaction", {"transaction_id": ids["transaction"]}, "has no transaction"),
        ("freeze_card", {"card_id": ids["card"]}, "has no card"),
        ("replace_card", {"card_id": ids["card"], "reason": "stolen"}, "has no card"),
        ("set_card_limit", {"card_id": ids["card"], "limit_type": "atm", "amount": 100}, "has no card"),
        ("remove_payee", {"payee_id": ids["payee"]}, "has no payee"),
        ("get_transfer", {"transfer_id": ids["transfer"]}, "has no transfer"),
        ("cancel_pending_transfer", {"transfer_id": ids["transfer"]}, "has no transfer"),
        (
            "open_dispute",
            {"transaction_id": ids["purchase"], "reason": "not_received", "description": "Never got the goods."},
            "has no transaction",
        ),
        ("get_dispute", {"dispute_id": dispute}, "has no dispute"),
    ):
        b.fails(tool, f"Customer {me} {what}", customer_id=me, **args)
    my_account = b.value("SELECT id FROM accounts WHERE customer_id = ? AND status = 'open' LIMIT 1", me)
    b.fails(
        "transfer_between_own_accounts", f"Customer {me} has no account", **b.between(me, my_account, ids["account"], 5)
    )
    my_checking = b.value("SELECT id FROM accounts WHERE customer_id = ? AND type = 'checking' LIMIT 1", me)
    b.fails(
        "transfer_to_payee",
        f"Customer {me} has no payee",
        customer_id=me,
        from_account_id=my_checking,
        payee_id=ids["payee"],
        amount=5,
    )


def test_contact_details_change_and_an_email_in_use_is_refused(b):
    me = b.customer()
    other = b.row("SELECT * FROM customers WHERE id != ? LIMIT 1", me)
    profile = b.ok("update_contact_info", customer_id=me, email="New.Address@Example.com", phone="(212) 555-0199")
    assert (profile.email, profile.phone) == ("new.address@example.com", "212-555-0199")
    row = b.row("SELECT * FROM customers WHERE id = ?", me)
    assert row["email"] == "new.address@example.com" and row["updated_at"].startswith("2026-05-15")
    b.fails("update_contact_info", "already used by another customer", customer_id=me, email=other["email"])
    b.fails("update_contact_info", "missing city, state, zip", customer_id=me, line1="1 Main St")
    b.fails("update_contact_info", "Nothing to change", customer_id=me, phone="212-555-0199")
    moved = b.ok("update_contact_info", customer_id=me, line1="1 Main St", city="Austin", state="TX", zip="78701")
    assert (moved.line1, moved.line2, moved.city, moved.state, moved.zip) == ("1 Main St", "", "Austin", "TX", "78701")


def test_the_profile_lists_only_open_accounts(b):
    me = b.customer("EXISTS (SELECT 1 FROM accounts a WHERE a.customer_id = c.id AND a.status = 'closed')")
    profile = b.ok("get_customer_profile", customer_id=me)
    open_ids = [
        r["id"] for r in b.rows("SELECT id FROM accounts WHERE customer_id = ? AND status = 'open' ORDER BY id", me)
    ]
    assert profile.open_account_ids == open_ids
