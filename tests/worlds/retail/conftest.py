"""Fixtures for the retail world's tests: a fresh small-scale episode per test, and helpers that
find test data by querying the seeded database instead of hard-coding ids."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpsim_worlds.retail import world as retail_world

from mcpsim.testing._driver import WorldDriver, world_fixtures


class Shop(WorldDriver):
    """A retail episode plus the queries the tests keep needing."""

    def stock(self, variant_id: str) -> int:
        return self.value("SELECT stock FROM variants WHERE id = ?", variant_id)

    def balance(self, payment_method_id: str) -> int:
        return self.value("SELECT balance_cents FROM payment_methods WHERE id = ?", payment_method_id)

    def net_paid(self, order_id: str) -> int:
        return self.value(
            "SELECT COALESCE(SUM(CASE kind WHEN 'charge' THEN amount_cents ELSE -amount_cents END), 0) "
            "FROM payments WHERE order_id = ?",
            order_id,
        )

    # -- arguments of the calls the tests repeat (the usual choices filled in) -----------------

    def return_args(
        self,
        order_id: str,
        item_ids: Iterable[str],
        *,
        quantity: int | None = None,
        method: str | None = None,
        reason: str = "defective",
    ) -> dict[str, Any]:
        """For return_delivered_order_items: the refund goes to `method`, by default the one that paid."""
        lines = [{"item_id": i} if quantity is None else {"item_id": i, "quantity": quantity} for i in item_ids]
        return {
            "order_id": order_id,
            "refund_payment_method_id": method or self.charged_method(order_id),
            "reason": reason,
            "items": lines,
        }

    def exchange_args(
        self, item: dict[str, Any], new_variant_id: str, *, method: str | None = None, reason: str = "wrong size"
    ) -> dict[str, Any]:
        """For exchange_delivered_order_items on one order line; the difference is settled with
        `method`, by default the one that paid."""
        return {
            "order_id": item["order_id"],
            "payment_method_id": method or self.charged_method(item["order_id"]),
            "reason": reason,
            "items": [{"item_id": item["id"], "new_variant_id": new_variant_id}],
        }

    def refund_args(
        self, order_id: str, amount: float, *, method: str | None = None, reason: str = "late delivery"
    ) -> dict[str, Any]:
        """For issue_partial_refund: to `method`, by default the one that paid."""
        return {
            "order_id": order_id,
            "payment_method_id": method or self.charged_method(order_id),
            "reason": reason,
            "amount": amount,
        }

    # -- common finds ------------------------------------------------------------------------

    def order_with_status(self, status: str) -> dict[str, Any]:
        return self.row("SELECT * FROM orders WHERE status = ? ORDER BY id LIMIT 1", status)

    def usable_method(self, customer_id: str, kind: str = "credit_card") -> dict[str, Any]:
        """A payment method of the customer that can be charged (for cards: not expired)."""
        return self.row(
            "SELECT * FROM payment_methods WHERE customer_id = ? AND kind = ? "
            "AND (kind != 'credit_card' OR exp_year * 100 + exp_month >= 202605) ORDER BY id LIMIT 1",
            customer_id,
            kind,
        )

    def charged_method(self, order_id: str) -> str:
        return self.value(
            "SELECT payment_method_id FROM payments WHERE order_id = ? AND kind = 'charge' ORDER BY rowid LIMIT 1",
            order_id,
        )

    def in_stock_variant(self, exclude_product: str | None = None, min_stock: int = 5) -> dict[str, Any]:
        return self.row(
            "SELECT * FROM variants WHERE available AND stock >= ? AND product_id IS NOT ? ORDER BY id LIMIT 1",
            min_stock,
            exclude_product,
        )

    def sibling(self, variant_id: str, min_stock: int = 1) -> dict[str, Any] | None:
        """Another available, in-stock variant of the same product."""
        rows = self.rows(
            "SELECT s.* FROM variants v JOIN variants s ON s.product_id = v.product_id AND s.id != v.id "
            "WHERE v.id = ? AND s.available AND s.stock >= ? ORDER BY s.id",
            variant_id,
            min_stock,
        )
        return rows[0] if rows else None

    def returnable_items(self, within_days: int = 30) -> list[dict[str, Any]]:
        """Open lines of delivered orders, delivered within `within_days` of the episode's clock."""
        return self.rows(
            "SELECT i.*, o.customer_id FROM order_items i JOIN orders o ON o.id = i.order_id "
            "JOIN shipments s ON s.id = i.shipment_id "
            "WHERE i.status = 'ordered' AND s.status = 'delivered' AND o.status = 'delivered' "
            "AND s.delivered_at > datetime('2026-05-15T09:00:00', ?) ORDER BY i.id",
            f"-{within_days - 1} days",
        )

    def returnable_item_with_sibling(self) -> tuple[dict[str, Any], dict[str, Any]]:
        for item in self.returnable_items():
            other = self.sibling(item["variant_id"], min_stock=item["quantity"])
            if other is not None:
                return item, other
        raise AssertionError("the seeded data has no returnable item whose product has another variant in stock")

    def gift_card_for(self, customer_id: str, balance_cents: int = 0) -> str:
        """Give the customer a gift card (arranged outside any tool call) and return its id."""
        self.arrange(
            "INSERT INTO payment_methods (id, customer_id, kind, gift_card_code, balance_cents, created_at) "
            "VALUES ('pm_gift_test', ?, 'gift_card', 'GC-TEST-0001', ?, '2026-01-01T00:00:00+00:00')",
            customer_id,
            balance_cents,
        )
        return "pm_gift_test"

    def delivered_order_with_lines(self, lines: int = 2) -> tuple[str, list[dict[str, Any]]]:
        """A delivered order, inside the return window, with at least `lines` returnable lines."""
        by_order: dict[str, list[dict[str, Any]]] = {}
        for item in self.returnable_items():
            by_order.setdefault(item["order_id"], []).append(item)
        order_id = next(o for o, items in by_order.items() if len(items) >= lines)
        return order_id, by_order[order_id]

    def pending_order(self) -> tuple[str, dict[str, Any]]:
        """A fresh pending order placed through the tools: (order id, its first item row)."""
        customer = self.row(
            "SELECT c.* FROM customers c JOIN payment_methods p ON p.customer_id = c.id "
            "WHERE p.kind = 'credit_card' AND p.exp_year * 100 + p.exp_month >= 202605 ORDER BY c.id LIMIT 1"
        )
        method = self.usable_method(customer["id"])
        variant = self.in_stock_variant()
        order = self.ok(
            "place_order",
            customer_id=customer["id"],
            items=[{"variant_id": variant["id"], "quantity": 2}],
            payment_method_id=method["id"],
        )
        item = self.row("SELECT * FROM order_items WHERE order_id = ?", order.order_id)
        return order.order_id, item


retail, shop, episode = world_fixtures(retail_world, Shop, names=("retail", "shop"))
