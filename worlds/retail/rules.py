"""The shop's fixed rules: limits, statuses and reasons, and the helpers every tool
group shares (finding an order, checking an order line can be returned, splitting a line)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar, get_args

from mcpsim.world import IdGenerator, ToolContext, WorldError, sql

from .tables import Address, Order, OrderItem, PaymentMethod, Shipment, Variant

T = TypeVar("T")

RETURN_WINDOW_DAYS = 30
MAX_ORDER_LINES = 10
MAX_LINE_QUANTITY = 10
CARRIERS = ("UPS", "FedEx", "USPS")

# Order statuses, grouped by what may still happen to them.
OPEN_STATUSES = ("pending", "processing", "payment_pending")  # not shipped yet: can be cancelled or redirected
AFTER_DELIVERY_STATUSES = ("delivered", "partially_returned", "exchanged", "returned")
CancelReason = Literal["no longer needed", "ordered by mistake", "found a better price", "shipping too slow"]
ReturnReason = Literal[
    "defective", "arrived damaged", "wrong item received", "not as described", "does not fit", "no longer needed"
]
ExchangeReason = Literal["wrong size", "different color", "defective", "arrived damaged", "changed my mind"]
RefundReason = Literal["damaged item", "missing item", "late delivery", "price adjustment", "service recovery"]
CANCEL_REASONS: tuple[str, ...] = get_args(CancelReason)
RETURN_REASONS: tuple[str, ...] = get_args(ReturnReason)
EXCHANGE_REASONS: tuple[str, ...] = get_args(ExchangeReason)


def gift_card_code(ids: IdGenerator) -> str:
    digits = ids.new("gift_card")
    return f"GC-{digits[:4]}-{digits[4:8]}-{digits[8:]}"


def tracking_number(ids: IdGenerator, carrier: str) -> str:
    """A carrier-shaped tracking number around a 12-digit seeded number."""
    number = ids.new("tracking")
    if carrier == "UPS":
        return f"1Z{number}"
    if carrier == "FedEx":
        return f"7{number}"
    return f"9400{number}"


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def date_of(moment: datetime) -> str:
    return moment.astimezone(UTC).date().isoformat()


def business_days_after(moment: datetime, days: int) -> datetime:
    """`days` working days later (weekends skipped): carriers' delivery estimates."""
    current = moment
    while days > 0:
        current += timedelta(days=1)
        if current.weekday() < 5:
            days -= 1
    return current


def normalize_order_id(order_id: str) -> str:
    """Accept 'W0123456' for '#W0123456': people often drop the '#'."""
    order_id = order_id.strip()
    return f"#{order_id}" if re.fullmatch(r"W\d+", order_id) else order_id


def get_order(ctx: ToolContext, order_id: str) -> Order:
    """The order, found with or without its '#'; the error names the id as the agent gave it."""
    return _found(ctx.session.get(Order, normalize_order_id(order_id)), order_id)


def get_order_row(ctx: ToolContext, order_id: str) -> Any:
    """`get_order`'s plain row (`mcpsim.world.sql`), for a tool that writes the order with plain SQL."""
    return _found(sql.find(ctx, Order, normalize_order_id(order_id)), order_id)


def _found(order: T | None, order_id: str) -> T:
    if order is None:
        raise WorldError(f"Order {order_id} not found")
    return order


def get_address_of(ctx: ToolContext, address_id: str, customer_id: str) -> Any:
    """The customer's address (a plain row, `mcpsim.world.sql`)."""
    address = sql.get(ctx, Address, address_id.strip())
    if address.customer_id != customer_id:
        raise WorldError(f"Address {address_id} does not belong to customer {customer_id}")
    return address


def get_payment_method_of(ctx: ToolContext, payment_method_id: str, customer_id: str) -> Any:
    """The customer's payment method (a plain row)."""
    method = sql.get(ctx, PaymentMethod, payment_method_id.strip())
    if method.customer_id != customer_id:
        raise WorldError(f"Payment method {payment_method_id} does not belong to customer {customer_id}")
    return method


def item_of_order(ctx: ToolContext, order: Any, item_id: str) -> Any:
    """The order's line (a plain row)."""
    item = sql.get(ctx, OrderItem, item_id.strip())
    if item.order_id != order.id:
        raise WorldError(f"Item {item_id} is not part of order {order.id}")
    return item


# How the refusals of `other_variant` end, per switch: after "Variant X is not a variant of P; ",
# after "Item I already is variant X", and after "Variant X is discontinued and cannot be ".
SWITCH_WORDING = {
    "exchange": (
        "an exchange keeps the product and only changes the variant",
        "; an exchange must change the variant",
        "exchanged into",
    ),
    "change": ("an item can only change to another variant of the same product", "", "ordered"),
}


def other_variant(ctx: ToolContext, item: Any, variant_id: str, switch: str) -> Any:
    """The variant an order line switches to (by `switch`, an exchange or a change of a pending
    order): another available variant of the line's product. Rows are plain rows."""
    same_product, unchanged, discontinued = SWITCH_WORDING[switch]
    variant = sql.get(ctx, Variant, variant_id.strip())
    if variant.product_id != item.product_id:
        raise WorldError(
            f"Variant {variant.id} is not a variant of {item.product_name} ({item.product_id}); {same_product}"
        )
    if variant.id == item.variant_id:
        raise WorldError(f"Item {item.id} already is variant {variant.id}{unchanged}")
    if not variant.available:
        raise WorldError(f"Variant {variant.id} is discontinued and cannot be {discontinued}")
    return variant


def reserve_stock(demand: dict[str, int], variant: Variant, quantity: int) -> None:
    """Add `quantity` units of `variant` to what a call takes from stock (`demand`, by variant id),
    refusing more than the variant has."""
    demand[variant.id] = demand.get(variant.id, 0) + quantity
    if variant.stock < demand[variant.id]:
        raise WorldError(
            f"Only {variant.stock} unit(s) of variant {variant.id} are in stock; {demand[variant.id]} needed"
        )


def refuse_duplicates(ids: list[str], what: str = "Item") -> None:
    seen: set[str] = set()
    for item_id in ids:
        if item_id in seen:
            raise WorldError(f"{what} {item_id} is listed more than once")
        seen.add(item_id)


def new_line_values(
    ctx: ToolContext, order_id: str, variant: Any, product_name: str, quantity: int, **links: str | None
) -> dict[str, Any]:
    """The columns of an open line buying `quantity` units of `variant` at its current price (its
    id drawn now), for `sql.insert`; `links` set its shipment, exchange or the line it replaces."""
    return {
        "id": ctx.new_id("item"),
        "order_id": order_id,
        "product_id": variant.product_id,
        "variant_id": variant.id,
        "product_name": product_name,
        "options": dict(variant.options),
        "quantity": quantity,
        "unit_price_cents": variant.price_cents,
        "status": "ordered",
        **links,
    }


def require_delivered_order(order: Any, action: str) -> None:
    if order.status not in AFTER_DELIVERY_STATUSES:
        raise WorldError(f"Order {order.id} has status '{order.status}'; only delivered orders can have items {action}")


def require_returnable_item(ctx: ToolContext, item: Any, action: str) -> None:
    """A line can be returned or exchanged once, after it was delivered, within the return window."""
    if item.status == "returned":
        raise WorldError(f"Item {item.id} was already returned (return {item.return_id})")
    if item.status == "exchanged":
        raise WorldError(f"Item {item.id} was already exchanged (exchange {item.exchange_id})")
    if item.status != "ordered":
        raise WorldError(f"Item {item.id} has status '{item.status}' and cannot be {action}")
    shipment = sql.find(ctx, Shipment, item.shipment_id) if item.shipment_id else None
    if shipment is None or shipment.status != "delivered" or shipment.delivered_at is None:
        raise WorldError(f"Item {item.id} has not been delivered yet and cannot be {action}")
    delivered = parse(shipment.delivered_at)
    if ctx.now > delivered + timedelta(days=RETURN_WINDOW_DAYS):
        raise WorldError(
            f"Item {item.id} was delivered on {date_of(delivered)}, more than {RETURN_WINDOW_DAYS} days ago; "
            "the return window has closed"
        )


def status_after_delivery(item_statuses: Iterable[str]) -> str:
    """A delivered order's status from its lines': returned, partially_returned, exchanged or delivered."""
    statuses = set(item_statuses)
    if "returned" in statuses:
        only_returned = statuses <= {"returned", "cancelled"}
        return "returned" if only_returned else "partially_returned"
    if "exchanged" in statuses:
        return "exchanged"
    return "delivered"
