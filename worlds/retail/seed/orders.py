"""The seeded order history. Each order's status decides its timeline, and its payments,
shipments, returns and exchanges follow from it: a delivered order has a delivered shipment and a
captured charge; a cancelled one has its refund; a returned line has a return and a refund.
Stock levels are today's, so past orders do not move them.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from mcpsim.world import SeedContext, iso

from ..rules import (
    CANCEL_REASONS,
    CARRIERS,
    EXCHANGE_REASONS,
    RETURN_REASONS,
    business_days_after,
    date_of,
    status_after_delivery,
    tracking_number,
)
from ..tables import Exchange, Order, OrderItem, Payment, Return, Shipment
from .rows import Row

STATUS_WEIGHTS = {
    "pending": 10,
    "processing": 7,
    "shipped": 10,
    "delivered": 47,
    "cancelled": 9,
    "returned": 5,
    "partially_returned": 5,
    "exchanged": 7,
}
BANK_REFUND_DAYS = 7  # after this, a card or PayPal refund has landed


class OrderHistory:
    def __init__(
        self,
        ctx: SeedContext,
        customers: list[Row],
        addresses: list[Row],
        methods: list[Row],
        products: list[Row],
        variants: list[Row],
    ) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        self.now = ctx.now
        self.customers = {c["id"]: c for c in customers}
        self.addresses: dict[str, list[Row]] = defaultdict(list)
        for address in addresses:
            self.addresses[address["customer_id"]].append(address)
        self.methods: dict[str, list[Row]] = defaultdict(list)
        for method in methods:
            if method["customer_id"]:
                self.methods[method["customer_id"]].append(method)
        self.product_names = {p["id"]: p["name"] for p in products}
        self.variants = variants
        self.siblings: dict[str, list[Row]] = defaultdict(list)
        for variant in variants:
            self.siblings[variant["product_id"]].append(variant)
        self.orders: list[Row] = []
        self.items: list[Row] = []
        self.payments: list[Row] = []
        self.shipments: list[Row] = []
        self.returns: list[Row] = []
        self.exchanges: list[Row] = []

    def tables(self) -> tuple[tuple[type, list[Row]], ...]:
        """In an order that satisfies the foreign keys."""
        return (
            (Order, self.orders),
            (Shipment, self.shipments),
            (Return, self.returns),
            (Exchange, self.exchanges),
            (OrderItem, self.items),
            (Payment, self.payments),
        )

    def build(self, count: int) -> None:
        rng = self.rng
        ids = list(self.customers)
        # A few loyal customers order a lot; many order once or never.
        weights = [rng.expovariate(1.0) for _ in ids]
        buyers = rng.choices(ids, weights=weights, k=count)
        statuses = rng.choices(list(STATUS_WEIGHTS), weights=list(STATUS_WEIGHTS.values()), k=count)
        for customer_id, status in zip(buyers, statuses, strict=True):
            self.order(customer_id, status)

    def days_ago(self, low: float, high: float) -> datetime:
        return self.now - timedelta(days=self.rng.uniform(low, high))

    def order(self, customer_id: str, status: str) -> None:
        rng, now = self.rng, self.now
        delivered: datetime | None = None
        if status == "pending":
            placed = self.days_ago(0.05, 2)
        elif status == "processing":
            placed = self.days_ago(0.3, 3)
        elif status == "shipped":
            placed = self.days_ago(2.5, 7)
        elif status == "cancelled":
            placed = self.days_ago(1, 170)
        else:
            delivered = now - timedelta(days=min(1 + rng.expovariate(1 / 40), 175))
            placed = delivered - timedelta(days=rng.uniform(2.5, 7))
        order_id = self.ctx.ids.new("order")
        customer = self.customers[customer_id]
        addresses = self.addresses[customer_id]
        address = addresses[0] if rng.random() < 0.75 else rng.choice(addresses)
        method = self.pick_method(customer_id, placed)
        order: Row = {
            "id": order_id,
            "customer_id": customer_id,
            "status": status,
            "placed_at": iso(placed),
            "updated_at": iso(placed),
            "ship_name": f"{customer['first_name']} {customer['last_name']}",
            "ship_line1": address["line1"],
            "ship_line2": address["line2"],
            "ship_city": address["city"],
            "ship_state": address["state"],
            "ship_zip": address["zip"],
            "ship_country": address["country"],
            "cancelled_at": None,
            "cancel_reason": None,
        }
        self.orders.append(order)
        lines = self.lines(order_id)
        total = sum(line["unit_price_cents"] * line["quantity"] for line in lines)
        self.payment(order_id, method, "charge", total, "purchase", placed)

        if status == "cancelled":
            cancelled = placed + timedelta(hours=rng.uniform(0.5, 36))
            for line in lines:
                line["status"] = "cancelled"
            order.update(
                cancelled_at=iso(cancelled), cancel_reason=rng.choice(CANCEL_REASONS), updated_at=iso(cancelled)
            )
            self.payment(order_id, method, "refund", total, "cancellation", cancelled)
            return
        if status in ("pending", "processing"):
            return
        label = placed + timedelta(hours=rng.uniform(4, 30))
        outbound = self.ship(order_id, "outbound", label, delivered)
        for line in lines:
            line["shipment_id"] = outbound["id"]
        order["updated_at"] = outbound["delivered_at"] or outbound["shipped_at"]
        if delivered is None or status == "delivered":
            return
        # Something happened after delivery, within the return window.
        since = (now - delivered).total_seconds() / 86_400
        acted = delivered + timedelta(days=rng.uniform(0.1, max(0.2, min(29, since - 0.05))))
        if status == "exchanged":
            self.exchange(order_id, customer_id, method, lines, acted)
        else:
            if status == "partially_returned" and len(lines) > 1:
                chosen = rng.sample(lines, rng.randint(1, len(lines) - 1))
            else:
                chosen = lines
            self.give_back(order_id, customer_id, method, chosen, acted)
        # Replacement lines are "ordered" and never change the outcome, so the original lines decide.
        order["status"] = status_after_delivery(line["status"] for line in lines)
        order["updated_at"] = iso(acted)

    def pick_method(self, customer_id: str, placed: datetime) -> Row:
        rng = self.rng
        methods = self.methods[customer_id]
        usable = [
            m
            for m in methods
            if m["kind"] != "credit_card" or (m["exp_year"], m["exp_month"]) >= (placed.year, placed.month)
        ]
        usable = usable or methods
        weights = [{"credit_card": 6, "paypal": 3, "gift_card": 1}[m["kind"]] for m in usable]
        return rng.choices(usable, weights=weights)[0]

    def lines(self, order_id: str) -> list[Row]:
        rng = self.rng
        count = rng.choices((1, 2, 3, 4, 5), weights=(30, 30, 20, 12, 8))[0]
        rows = []
        for variant in rng.sample(self.variants, count):
            price = variant["price_cents"]
            if rng.random() < 0.1:  # bought on sale
                price = max(99, price * rng.choice((80, 85, 90)) // 10_000 * 100 + 99)
            rows.append(self.item_row(order_id, variant, rng.choices((1, 2, 3), weights=(85, 12, 3))[0], price))
        return rows

    def item_row(self, order_id: str, variant: Row, quantity: int, price_cents: int) -> Row:
        row: Row = {
            "id": self.ctx.ids.new("item"),
            "order_id": order_id,
            "product_id": variant["product_id"],
            "variant_id": variant["id"],
            "product_name": self.product_names[variant["product_id"]],
            "options": dict(variant["options"]),
            "quantity": quantity,
            "unit_price_cents": price_cents,
            "status": "ordered",
            "shipment_id": None,
            "return_id": None,
            "exchange_id": None,
            "replaces_item_id": None,
        }
        self.items.append(row)
        return row

    def payment(
        self, order_id: str, method: Row, kind: str, cents: int, reason: str, when: datetime, **links: str
    ) -> None:
        if kind == "charge":
            status = "captured"
        elif method["kind"] == "gift_card" or self.now - when > timedelta(days=BANK_REFUND_DAYS):
            status = "completed"
        else:
            status = "pending"
        self.payments.append(
            {
                "id": self.ctx.ids.new("payment"),
                "order_id": order_id,
                "payment_method_id": method["id"],
                "kind": kind,
                "amount_cents": cents,
                "status": status,
                "reason": reason,
                "created_at": iso(when),
                "return_id": links.get("return_id"),
                "exchange_id": links.get("exchange_id"),
            }
        )

    def ship(self, order_id: str, kind: str, created: datetime, delivered: datetime | None) -> Row:
        """A parcel labelled at `created`: delivered at `delivered` if that has passed, else on its way."""
        rng, now = self.rng, self.now
        carrier = rng.choice(CARRIERS)
        shipped = created + timedelta(hours=rng.uniform(2, 20))
        estimate = business_days_after(shipped, rng.randint(2, 5))
        row: Row = {
            "id": self.ctx.ids.new("shipment"),
            "order_id": order_id,
            "kind": kind,
            "carrier": carrier,
            "tracking_number": tracking_number(self.ctx.ids, carrier),
            "status": "label_created",
            "created_at": iso(created),
            "shipped_at": None,
            "estimated_delivery": date_of(estimate),
            "delivered_at": None,
        }
        if delivered is not None and delivered <= now:
            shipped = min(shipped, delivered - timedelta(hours=12))
            row.update(status="delivered", shipped_at=iso(shipped), delivered_at=iso(delivered))
        elif shipped <= now:
            moving = "out_for_delivery" if date_of(estimate) == date_of(now) else "in_transit"
            row.update(status=moving, shipped_at=iso(shipped))
        self.shipments.append(row)
        return row

    def give_back(self, order_id: str, customer_id: str, method: Row, lines: list[Row], when: datetime) -> None:
        rng = self.rng
        gift_cards = [m for m in self.methods[customer_id] if m["kind"] == "gift_card"]
        refund_to = rng.choice(gift_cards) if gift_cards and rng.random() < 0.2 else method
        cents = sum(line["unit_price_cents"] * line["quantity"] for line in lines)
        label = self.ship(order_id, "return", when, when + timedelta(days=rng.uniform(3, 8)))
        return_id = self.ctx.ids.new("return")
        self.returns.append(
            {
                "id": return_id,
                "order_id": order_id,
                "customer_id": customer_id,
                "reason": rng.choice(RETURN_REASONS),
                "refund_payment_method_id": refund_to["id"],
                "refund_cents": cents,
                "shipment_id": label["id"],
                "created_at": iso(when),
            }
        )
        for line in lines:
            line.update(status="returned", return_id=return_id)
        self.payment(order_id, refund_to, "refund", cents, "return", when, return_id=return_id)

    def exchange(self, order_id: str, customer_id: str, method: Row, lines: list[Row], when: datetime) -> None:
        rng = self.rng
        exchange_id = self.ctx.ids.new("exchange")
        back = self.ship(order_id, "return", when, when + timedelta(days=rng.uniform(3, 8)))
        sent = min(when + timedelta(hours=rng.uniform(1, 24)), self.now)
        replacement = self.ship(order_id, "replacement", sent, sent + timedelta(days=rng.uniform(2, 6)))
        difference = 0
        for line in rng.sample(lines, rng.randint(1, len(lines))):
            others = [v for v in self.siblings[line["product_id"]] if v["id"] != line["variant_id"]]
            new_variant = rng.choice(others)
            new_line = self.item_row(order_id, new_variant, line["quantity"], new_variant["price_cents"])
            new_line.update(shipment_id=replacement["id"], exchange_id=exchange_id, replaces_item_id=line["id"])
            line.update(status="exchanged", exchange_id=exchange_id)
            difference += (new_variant["price_cents"] - line["unit_price_cents"]) * line["quantity"]
        self.exchanges.append(
            {
                "id": exchange_id,
                "order_id": order_id,
                "customer_id": customer_id,
                "reason": rng.choice(EXCHANGE_REASONS),
                "price_difference_cents": difference,
                "payment_method_id": method["id"] if difference else None,
                "return_shipment_id": back["id"],
                "replacement_shipment_id": replacement["id"],
                "created_at": iso(when),
            }
        )
        if difference > 0:
            self.payment(
                order_id, method, "charge", difference, "exchange price difference", when, exchange_id=exchange_id
            )
        elif difference < 0:
            self.payment(
                order_id, method, "refund", -difference, "exchange price difference", when, exchange_id=exchange_id
            )
