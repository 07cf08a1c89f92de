"""After delivery: returns, exchanges and partial refunds."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import Field

from mcpsim.world import ToolContext, WorldError, derive_seed, iso, sql, to_cents

from .. import world
from ..inputs import ExchangeLine, OptionalPaymentMethodId, OrderId, PaymentMethodId, ReturnLine
from ..ledger import net_by_method, refund, settle_difference
from ..rules import (
    AFTER_DELIVERY_STATUSES,
    CARRIERS,
    ExchangeReason,
    RefundReason,
    ReturnReason,
    get_order_row,
    get_payment_method_of,
    item_of_order,
    new_line_values,
    other_variant,
    refuse_duplicates,
    require_delivered_order,
    require_returnable_item,
    reserve_stock,
    status_after_delivery,
    tracking_number,
)
from ..tables import Exchange, Order, OrderItem, Return, Shipment, Variant
from ..views import OrderDetails, order_details

_Case = TypeVar("_Case", Return, Exchange)

RefundTarget = Annotated[
    PaymentMethodId,
    Field(
        description="Where the refund goes: a payment method that paid for the order, or a gift card of the customer."
    ),
]


def _label(ctx: ToolContext, order: Any, kind: str) -> Any:
    """A parcel not yet handed to the carrier: a prepaid return label or a replacement to send.
    The carrier follows from the shipment's id, not from the call's random draw, so how many
    calls came before does not change it."""
    shipment_id = ctx.new_id("shipment")
    carrier = CARRIERS[derive_seed(shipment_id) % len(CARRIERS)]
    return sql.insert(
        ctx,
        Shipment,
        id=shipment_id,
        order_id=order.id,
        kind=kind,
        carrier=carrier,
        tracking_number=tracking_number(ctx.ids, carrier),
        status="label_created",
        created_at=iso(ctx.now),
    )


def _units_taken_back(item: Any, quantity: int | None, verb: str) -> int:
    """How many units of `item` a return or an exchange (`verb`) takes back: all of them unless
    `quantity` says fewer, never more than the line has."""
    units = item.quantity if quantity is None else quantity
    if units > item.quantity:
        raise WorldError(f"Item {item.id} has only {item.quantity} unit(s); cannot {verb} {units}")
    return units


def _take_back(
    ctx: ToolContext, writes: sql.Writes, stock: dict[str, int], item: Any, quantity: int, **link: str
) -> Any:
    """Split the units taken back off their line (the line itself, or a new line split off it
    with the same purchase: variant, price, parcel, what it replaces), `link` them to their
    return or exchange (status and id), and put them back into their variant's stock. `stock`
    holds the variants read so far (their current stock); reading another one writes what is
    queued first, as the ORM's autoflush did."""
    if quantity == item.quantity:
        part = item._replace(**link)
        writes.update(OrderItem, item.id, **link)
    else:
        writes.update(OrderItem, item.id, quantity=item.quantity - quantity)
        copied = {**item._asdict(), "return_id": None, "exchange_id": None, **link}
        part = writes.insert(OrderItem, **{**copied, "id": ctx.new_id("item"), "quantity": quantity})
    if part.variant_id not in stock:
        writes.flush()
        stock[part.variant_id] = sql.get(ctx, Variant, part.variant_id).stock
    stock[part.variant_id] += quantity
    writes.update(Variant, part.variant_id, stock=stock[part.variant_id])
    return part


def _refreshed(ctx: ToolContext, writes: sql.Writes, order: Any) -> OrderDetails:
    """The order once some of its lines went back: its status follows from its lines now."""
    writes.flush()
    lines = sql.select(ctx, OrderItem, "order_id = ?", (order.id,))
    changed = {"status": status_after_delivery(item.status for item in lines), "updated_at": iso(ctx.now)}
    sql.update(ctx, Order, order.id, **changed)
    return order_details(ctx, order._replace(**changed))


def _open_case(ctx: ToolContext, table: type[_Case], order: Any, reason: str, **fields: Any) -> Any:
    """A return or an exchange (`table`) of `order`, opened now for the customer's `reason`."""
    return sql.insert(
        ctx,
        table,
        id=ctx.new_id(table.id_namespace),
        order_id=order.id,
        customer_id=order.customer_id,
        reason=reason,
        created_at=iso(ctx.now),
        **fields,
    )


@world.tool(destructive=True, irreversible=True)
def return_delivered_order_items(
    ctx: ToolContext,
    order_id: OrderId,
    items: Annotated[
        list[ReturnLine], Field(min_length=1, max_length=20, description="The delivered order lines to return.")
    ],
    refund_payment_method_id: RefundTarget,
    reason: Annotated[ReturnReason, Field(description="Why the customer returns the items.")],
) -> OrderDetails:
    """Return delivered items, within 30 days of their delivery. Each line can be returned once
    (give a quantity to return only some of its units). The items' price is refunded at once to
    refund_payment_method_id, never more than the order still holds; the items go back into stock
    and a prepaid return label is created (its tracking number is in the order's returns)."""
    order = get_order_row(ctx, order_id)
    require_delivered_order(order, "returned")
    refuse_duplicates([line.item_id for line in items])
    method = get_payment_method_of(ctx, refund_payment_method_id, order.customer_id)
    chosen: list[tuple[Any, int]] = []
    for line in items:
        item = item_of_order(ctx, order, line.item_id)
        require_returnable_item(ctx, item, "returned")
        chosen.append((item, _units_taken_back(item, line.quantity, "return")))

    label = _label(ctx, order, "return")
    returned = _open_case(
        ctx, Return, order, reason, refund_payment_method_id=method.id, refund_cents=0, shipment_id=label.id
    )
    writes = sql.Writes(ctx)
    stock: dict[str, int] = {}
    value = 0
    for item, quantity in chosen:
        part = _take_back(ctx, writes, stock, item, quantity, status="returned", return_id=returned.id)
        value += part.unit_price_cents * part.quantity
    writes.flush()
    # After a partial refund the order may hold less than the items' price; never refund more.
    amount = min(value, sum(net_by_method(ctx, order.id).values()))
    if amount > 0:
        refund(ctx, order, method, amount, "return", return_id=returned.id)
    writes.update(Return, returned.id, refund_cents=max(amount, 0))
    return _refreshed(ctx, writes, order)


@world.tool(destructive=True, irreversible=True)
def exchange_delivered_order_items(
    ctx: ToolContext,
    order_id: OrderId,
    items: Annotated[
        list[ExchangeLine],
        Field(min_length=1, max_length=20, description="The delivered lines to exchange and the variants wanted."),
    ],
    reason: Annotated[ExchangeReason, Field(description="Why the customer exchanges the items.")],
    payment_method_id: OptionalPaymentMethodId = None,
) -> OrderDetails:
    """Exchange delivered items, within 30 days of their delivery, for another variant of the same
    product (another size or color, say). The new variant must be available and in stock. Each line
    can be exchanged once (give a quantity to exchange only some units). The old items go back into
    stock and the new ones leave it; a return label and a replacement shipment are created. A price
    difference is charged to payment_method_id, or refunded to it (an original payment method of
    the order, or a gift card)."""
    order = get_order_row(ctx, order_id)
    require_delivered_order(order, "exchanged")
    refuse_duplicates([line.item_id for line in items])
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id) if payment_method_id else None
    plan = []
    demand: dict[str, int] = {}
    stock: dict[str, int] = {}  # the variants read so far: their stock as this call leaves it
    for line in items:
        item = item_of_order(ctx, order, line.item_id)
        require_returnable_item(ctx, item, "exchanged")
        variant = other_variant(ctx, item, line.new_variant_id, "exchange")
        stock.setdefault(variant.id, variant.stock)
        quantity = _units_taken_back(item, line.quantity, "exchange")
        reserve_stock(demand, variant, quantity)
        plan.append((item, variant, quantity))

    back = _label(ctx, order, "return")
    replacement = _label(ctx, order, "replacement")
    exchange = _open_case(
        ctx,
        Exchange,
        order,
        reason,
        price_difference_cents=0,
        return_shipment_id=back.id,
        replacement_shipment_id=replacement.id,
    )
    writes = sql.Writes(ctx)
    difference = 0
    for item, variant, quantity in plan:
        part = _take_back(ctx, writes, stock, item, quantity, status="exchanged", exchange_id=exchange.id)
        stock[variant.id] -= quantity
        writes.update(Variant, variant.id, stock=stock[variant.id])
        difference += (variant.price_cents - part.unit_price_cents) * quantity
        new_line = new_line_values(
            ctx,
            order.id,
            variant,
            part.product_name,
            quantity,
            shipment_id=replacement.id,
            exchange_id=exchange.id,
            replaces_item_id=part.id,
        )
        writes.insert(OrderItem, **new_line)
    writes.update(
        Exchange,
        exchange.id,
        price_difference_cents=difference,
        payment_method_id=method.id if method and difference else None,
    )
    writes.flush()
    settle_difference(ctx, order, method, difference, "exchange price difference", exchange_id=exchange.id)
    return _refreshed(ctx, writes, order)


@world.tool(destructive=True, irreversible=True)
def issue_partial_refund(
    ctx: ToolContext,
    order_id: OrderId,
    amount: Annotated[float, Field(gt=0, le=100_000, description="The refund in dollars, such as 12.50.")],
    payment_method_id: RefundTarget,
    reason: Annotated[RefundReason, Field(description="Why the refund is given.")],
) -> OrderDetails:
    """Refund part of what a shipped or delivered order cost, without returning anything (an item
    arrived damaged, a parcel came late...). A refund never exceeds what the order still holds
    (paid minus already refunded), nor what a card or PayPal account paid for the order. Pending
    and processing orders are changed or cancelled instead."""
    order = get_order_row(ctx, order_id)
    if order.status not in ("shipped", *AFTER_DELIVERY_STATUSES):
        raise WorldError(
            f"Order {order.id} has status '{order.status}'; only shipped or delivered orders can get a partial refund"
        )
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id)
    refund(ctx, order, method, to_cents(amount), f"partial refund: {reason}")
    updated_at = iso(ctx.now)
    sql.update(ctx, Order, order.id, updated_at=updated_at)
    return order_details(ctx, order._replace(updated_at=updated_at))
