"""Fixtures for the bank world's tests: a fresh small-scale episode per test, and helpers that
find test data by querying the seeded database instead of hard-coding ids."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcpsim_worlds.bank import world as bank_world

from mcpsim.testing._driver import WorldDriver, world_fixtures
from mcpsim.world import World

TODAY = "2026-05-15"


class Bank(WorldDriver):
    """A bank episode plus the queries the tests keep needing."""

    # -- identity ----------------------------------------------------------------------------

    def answers(self, customer_id: str, **wrong: str) -> dict[str, str]:
        """The arguments of a verify_identity call with the customer's own details, but for `wrong` ones."""
        c = self.row("SELECT * FROM customers WHERE id = ?", customer_id)
        return {"customer_id": customer_id, "date_of_birth": c["date_of_birth"], "ssn_last4": c["ssn_last4"]} | wrong

    def verify(self, customer_id: str) -> str:
        assert self.ok("verify_identity", **self.answers(customer_id)).verified
        return customer_id

    def verified_row(self, sql: str, *params: Any) -> tuple[str, dict[str, Any]]:
        """(customer id, row): the first row of `sql`, which has a customer_id column, and its customer verified."""
        row = self.row(sql, *params)
        return self.verify(row["customer_id"]), row

    def customer(self, where: str = "1", *params: Any) -> str:
        """An active customer matching `where` (SQL over customers c), verified."""
        return self.verify(
            self.value(
                f"SELECT c.id FROM customers c WHERE c.status = 'active' AND {where} ORDER BY c.id LIMIT 1", *params
            )
        )

    # -- money -------------------------------------------------------------------------------

    def balance(self, account_id: str) -> int:
        return self.value("SELECT balance_cents FROM accounts WHERE id = ?", account_id)

    def available(self, account_id: str) -> int:
        owner = self.value("SELECT customer_id FROM accounts WHERE id = ?", account_id)
        return round(self.ok("get_account", customer_id=owner, account_id=account_id).available_balance * 100)

    def today_out(self, account_id: str) -> int:
        return self.value(
            "SELECT COALESCE(SUM(amount_cents), 0) FROM transfers WHERE from_account_id = ? "
            "AND status IN ('completed', 'pending', 'held') AND created_at >= ?",
            account_id,
            TODAY,
        )

    def checking_with_savings(self) -> tuple[str, str, str]:
        """(customer, checking, savings): open accounts, no transfers out today, no restriction."""
        row = self.row(
            "SELECT c.customer_id, c.id AS checking, s.id AS savings FROM accounts c "
            "JOIN accounts s ON s.customer_id = c.customer_id AND s.type = 'savings' AND s.status = 'open' "
            "JOIN customers u ON u.id = c.customer_id AND u.status = 'active' "
            "WHERE c.type = 'checking' AND c.status = 'open' AND c.balance_cents > 300000 AND s.balance_cents > 300000 "
            "AND NOT EXISTS (SELECT 1 FROM transfers t WHERE t.from_account_id IN (c.id, s.id) AND t.created_at >= ?) "
            "AND (SELECT COUNT(*) FROM transfers t WHERE t.from_account_id = s.id "
            "AND t.created_at >= '2026-05-01') = 0 "
            "ORDER BY c.id LIMIT 1",
            TODAY,
        )
        self.verify(row["customer_id"])
        return row["customer_id"], row["checking"], row["savings"]

    def old_payee(self, customer_id: str) -> str:
        return self.value(
            "SELECT id FROM payees WHERE customer_id = ? AND status = 'active' "
            "AND created_at < '2026-05-01' ORDER BY id LIMIT 1",
            customer_id,
        )

    @staticmethod
    def payee_args(customer_id: str, **changes: Any) -> dict[str, Any]:
        """The arguments of an add_payee call: a valid payee unless `changes` say otherwise."""
        return {
            "customer_id": customer_id,
            "name": "Jordan Test",
            "bank_name": "JPMorgan Chase Bank",
            "routing_number": "021000021",
            "account_number": "123456789",
            "account_type": "checking",
        } | changes

    def add_payee(self, customer_id: str, **changes: Any) -> str:
        return self.ok("add_payee", **self.payee_args(customer_id, **changes)).payee_id

    @staticmethod
    def between(customer_id: str, from_account_id: str, to_account_id: str, amount: float) -> dict[str, Any]:
        """The arguments of a transfer_between_own_accounts call."""
        return {
            "customer_id": customer_id,
            "from_account_id": from_account_id,
            "to_account_id": to_account_id,
            "amount": amount,
        }


bank, b, episode = world_fixtures(bank_world, Bank, names=("bank", "b"))


@pytest.fixture
def new_bank(bank: World, world_driver: Callable[..., Any]) -> Callable[[], Bank]:
    """Makes more independent small-scale episodes, seed 0 (each must end free of simulator bugs)."""
    return lambda: world_driver(bank, driver=Bank)
