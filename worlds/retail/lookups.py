"""Finding rows or failing with a message the agent understands, and order-line bookkeeping."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import literal_column
from sqlmodel import Session, select

from mcpsim.world import ToolContext, WorldError

from .common import AFTER_DELIVERY_STATUSES, RETURN_WINDOW_DAYS, date_of, new_id, parse
from .tables import Customer, Order, OrderItem, PaymentMethod, Product, Shipment, Variant


def get_customer(session: Session, customer_id: str) -> Customer:
    customer = session.get(Customer, customer_id.strip())
    if customer is None:
        raise WorldError(f"Customer {customer_id} not found")
    return customer


def normalize_order_id(order_id: str) -> str:
    """Accept 'W0123456' for '#W0123456': people often drop the '#'."""
    order_id = order_id.strip()
    return f"#{order_id}" if re.fullmatch(r"W\d+", order_id) else order_id


def get_order(session: Session, order_id: str) -> Order:
    order = session.get(Order, normalize_order_id(order_id))
    if order is None:
        raise WorldError(f"Order {order_id} not found")
    return order


def get_product(session: Session, product_id: str) -> Product:
    product = session.get(Product, product_id.strip())
    if product is None:
        raise WorldError(f"Product {product_id} not found")
    return product


def get_variant(session: Session, variant_id: str) -> Variant:
    variant = session.get(Variant, variant_id.strip())
    if variant is None:
        raise WorldError(f"Variant {variant_id} not found")
    return variant


def get_payment_method_of(session: Session, payment_method_id: str, customer_id: str) -> PaymentMethod:
    method = session.get(PaymentMethod, payment_method_id.strip())
    if method is None:
        raise WorldError(f"Payment method {payment_method_id} not found")
    if method.customer_id != customer_id:
        raise WorldError(f"Payment method {payment_method_id} does not belong to customer {customer_id}")
    return method


def order_items(session: Session, order_id: str) -> list[OrderItem]:
    """The order's lines in the order they were created."""
    query = select(OrderItem).where(OrderItem.order_id == order_id).order_by(literal_column("rowid"))
    return list(session.exec(query))


def item_of_order(session: Session, order: Order, item_id: str) -> OrderItem:
    item = session.get(OrderItem, item_id.strip())
    if item is None:
        raise WorldError(f"Item {item_id} not found")
    if item.order_id != order.id:
        raise WorldError(f"Item {item_id} is not part of order {order.id}")
    return item


def refuse_duplicates(ids: list[str], what: str = "Item") -> None:
    seen: set[str] = set()
    for item_id in ids:
        if item_id in seen:
            raise WorldError(f"{what} {item_id} is listed more than once")
        seen.add(item_id)


def split_line(ctx: ToolContext, item: OrderItem, quantity: int | None) -> OrderItem:
    """The part of a line that `quantity` units make: the line itself, or a new line split off it."""
    if quantity is None or quantity == item.quantity:
        return item
    if quantity > item.quantity:
        raise WorldError(f"Item {item.id} has only {item.quantity} unit(s); cannot take {quantity}")
    item.quantity -= quantity
    part = OrderItem(
        id=new_id(ctx.ids, "item"),
        order_id=item.order_id,
        product_id=item.product_id,
        variant_id=item.variant_id,
        product_name=item.product_name,
        options=dict(item.options),
        quantity=quantity,
        unit_price_cents=item.unit_price_cents,
        status=item.status,
        shipment_id=item.shipment_id,
        replaces_item_id=item.replaces_item_id,
    )
    ctx.session.add(part)
    ctx.session.add(item)
    return part


def require_delivered_order(order: Order, action: str) -> None:
    if order.status not in AFTER_DELIVERY_STATUSES:
        raise WorldError(f"Order {order.id} has status '{order.status}'; only delivered orders can have items {action}")


def require_returnable_item(ctx: ToolContext, item: OrderItem, action: str) -> None:
    """A line can be returned or exchanged once, after it was delivered, within the return window."""
    if item.status == "returned":
        raise WorldError(f"Item {item.id} was already returned (return {item.return_id})")
    if item.status == "exchanged":
        raise WorldError(f"Item {item.id} was already exchanged (exchange {item.exchange_id})")
    if item.status != "ordered":
        raise WorldError(f"Item {item.id} has status '{item.status}' and cannot be {action}")
    shipment = ctx.session.get(Shipment, item.shipment_id) if item.shipment_id else None
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
