"""The seeded bank data: sizes per scale, determinism, and the invariants the rules rely on."""

from __future__ import annotations

import pytest

from mcpsim.engine._episode import Episode
from tests.support.seed_checks import counts, large_scale_test, other_seed_test, small_built_fast


def test_the_small_scale_builds_fast_with_every_situation_present(bank):
    ep = small_built_fast(bank, 5)
    sizes = counts(ep)
    assert sizes["customers"] == sizes["identity_verifications"] == 16 and sizes["transactions"] > 800
    q = ep.query
    assert q("SELECT COUNT(*) n FROM customers WHERE status = 'restricted'")[0]["n"] >= 1
    assert q("SELECT COUNT(*) n FROM identity_verifications WHERE status != 'unverified'")[0]["n"] == 0
    for status in ("frozen", "closed", "active"):
        assert q("SELECT COUNT(*) n FROM cards WHERE status = ?", (status,))[0]["n"] >= 1, status
    assert q("SELECT COUNT(*) n FROM transfers WHERE status = 'held'")[0]["n"] >= 1
    assert q("SELECT COUNT(*) n FROM transfers WHERE created_at >= '2026-05-15'")[0]["n"] >= 1
    assert q("SELECT COUNT(*) n FROM payees WHERE created_at >= '2026-05-08T09:00:00'")[0]["n"] >= 1
    assert q("SELECT COUNT(*) n FROM disputes WHERE status = 'open'")[0]["n"] >= 1
    assert q("SELECT COUNT(*) n FROM accounts WHERE status = 'closed'")[0]["n"] >= 1
    assert q("SELECT COUNT(*) n FROM transactions WHERE status = 'pending'")[0]["n"] >= 1
    assert_consistent(ep)


@pytest.mark.slow
def test_the_default_scale_is_consistent(bank, templates):
    ep = Episode.create(bank, seed=0, scale="default", templates=templates)
    sizes = counts(ep)
    assert sizes["customers"] == 200 and sizes["accounts"] >= 350 and sizes["transactions"] >= 20_000
    assert_consistent(ep)


def assert_consistent(ep: Episode) -> None:
    q = ep.query
    # no account is overdrawn, and what can be moved is never negative
    assert q("SELECT COUNT(*) n FROM accounts WHERE balance_cents < 0")[0]["n"] == 0
    negative = q(
        "SELECT a.id FROM accounts a WHERE a.balance_cents "
        "- COALESCE((SELECT -SUM(amount_cents) FROM transactions t WHERE t.account_id = a.id AND t.status = 'pending' "
        "AND t.amount_cents < 0), 0) "
        "- COALESCE((SELECT SUM(amount_cents) FROM transfers t "
        "WHERE t.from_account_id = a.id AND t.status = 'held'), 0)"
        " < 0"
    )
    assert negative == []
    # no account went over its daily limit today
    over = q(
        "SELECT a.id FROM accounts a JOIN transfers t ON t.from_account_id = a.id "
        "WHERE t.created_at >= '2026-05-15' AND t.status != 'cancelled' GROUP BY a.id "
        "HAVING SUM(t.amount_cents) > a.daily_transfer_limit_cents"
    )
    assert over == []
    # nothing happened after the epoch; every dated history line is in the last six and a half months
    assert q("SELECT MAX(posted_at) m FROM transactions")[0]["m"] < "2026-05-15T09:00:00"
    assert q("SELECT MIN(posted_at) m FROM transactions")[0]["m"] >= "2025-11-01"
    # internal transfers post both legs; external ones one line (pending while pending); held ones none
    legs = q(
        "SELECT t.kind, t.status, COUNT(x.id) n FROM transfers t LEFT JOIN transactions x "
        "ON x.transfer_id = t.id GROUP BY t.id"
    )
    for row in legs:
        expected = {"internal": 2, "external": 1}[row["kind"]] if row["status"] != "held" else 0
        assert row["n"] == expected, row
    # every card transaction uses a card of its own account, valid at that time (a merchant's refund may
    # still reach a card closed since the purchase)
    assert (
        q(
            "SELECT COUNT(*) n FROM transactions t JOIN cards k ON k.id = t.card_id "
            "WHERE k.account_id != t.account_id OR t.posted_at < k.issued_at "
            "OR (k.closed_at IS NOT NULL AND t.posted_at > k.closed_at AND t.kind != 'refund')"
        )[0]["n"]
        == 0
    )
    # every dispute has its provisional credit and concerns a card purchase of the same customer
    bad = q(
        "SELECT d.id FROM disputes d JOIN transactions t ON t.id = d.transaction_id "
        "JOIN transactions c ON c.id = d.credit_transaction_id JOIN accounts a ON a.id = t.account_id "
        "WHERE a.customer_id != d.customer_id OR c.amount_cents != d.provisional_credit_cents "
        "OR t.card_id IS NULL OR d.amount_cents != -t.amount_cents"
    )
    assert bad == []
    # payees have valid routing numbers; held transfers go to payees less than 7 days old
    from mcpsim_worlds.bank.rules import aba_valid

    assert all(aba_valid(r["routing_number"]) for r in q("SELECT DISTINCT routing_number FROM payees"))
    assert (
        q(
            "SELECT COUNT(*) n FROM transfers t JOIN payees p ON p.id = t.payee_id WHERE t.status = 'held' "
            "AND (p.created_at < '2026-05-08T09:00:00' OR t.amount_cents <= 100000)"
        )[0]["n"]
        == 0
    )
    # customers' emails and phones are unique
    assert q("SELECT COUNT(DISTINCT phone) n FROM customers")[0]["n"] == q("SELECT COUNT(*) n FROM customers")[0]["n"]


test_the_large_scale_has_tens_of_thousands_of_rows = large_scale_test("bank", "~6 s", assert_consistent, total=100_000)
test_a_different_seed_builds_different_data = other_seed_test("bank", differ={"customers": "email"})
