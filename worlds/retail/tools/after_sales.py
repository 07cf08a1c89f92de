"""After delivery: returns, exchanges and partial refunds."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import Field

from mcpsim.world import ToolContext, WorldError, derive_seed
from mcpsim.world.toolkit import iso, to_cents

from .. import world
from ..inputs import ExchangeLine, OptionalPaymentMethodId, OrderId, PaymentMethodId, ReturnLine
from ..ledger import net_by_method, refund, settle_difference
from ..rules import (
    AFTER_DELIVERY_STATUSES,
    CARRIERS,
    ExchangeReason,
    RefundReason,
    ReturnReason,
    get_order,
    get_payment_method_of,
    item_of_order,
    new_order_line,
    order_items,
    other_variant,
    refuse_duplicates,
    require_delivered_order,
    require_returnable_item,
    reserve_stock,
    split_line,
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


def _label(ctx: ToolContext, order: Order, kind: str) -> Shipment:
    """A parcel not yet handed to the carrier: a prepaid return label or a replacement to send.
    The carrier follows from the shipment's id, not from the call's random draw, so how many
    calls came before does not change it."""
    shipment_id = ctx.new_id("shipment")
    carrier = CARRIERS[derive_seed(shipment_id) % len(CARRIERS)]
    shipment = Shipment(
        id=shipment_id,
        order_id=order.id,
        kind=kind,
        carrier=carrier,
        tracking_number=tracking_number(ctx.ids, carrier),
        status="label_created",
        created_at=iso(ctx.now),
    )
    ctx.add(shipment)
    ctx.session.flush()
    return shipment


def _units_taken_back(item: OrderItem, quantity: int | None, verb: str) -> int:
    """How many units of `item` a return or an exchange (`verb`) takes back: all of them unless
    `quantity` says fewer, never more than the line has."""
    units = item.quantity if quantity is None else quantity
    if units > item.quantity:
        raise WorldError(f"Item {item.id} has only {item.quantity} unit(s); cannot {verb} {units}")
    return units


def _take_back(
    ctx: ToolContext, item: OrderItem, quantity: int, *, return_id: str | None = None, exchange_id: str | None = None
) -> tuple[OrderItem, Variant]:
    """Split the units taken back off their line, link them to their return or exchange, and put
    them back into their variant's stock. The caller stages the part and the variant."""
    part = split_line(ctx, item, quantity)
    if return_id is not None:
        part.status, part.return_id = "returned", return_id
    else:
        part.status, part.exchange_id = "exchanged", exchange_id
    variant = ctx.get(Variant, part.variant_id)
    variant.stock += part.quantity
    return part, variant


def _refreshed(ctx: ToolContext, order: Order) -> OrderDetails:
    """The order once some of its lines went back: its status follows from its lines now."""
    order.status = status_after_delivery(item.status for item in order_items(ctx.session, order.id))
    order.updated_at = iso(ctx.now)
    ctx.add(order)
    return order_details(ctx.session, order)


def _open_case(ctx: ToolContext, table: type[_Case], order: Order, reason: str, **fields: Any) -> _Case:
    """A return or an exchange (`table`) of `order`, opened now for the customer's `reason`."""
    return table(
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
    session = ctx.session
    order = get_order(ctx, order_id)
    require_delivered_order(order, "returned")
    refuse_duplicates([line.item_id for line in items])
    method = get_payment_method_of(ctx, refund_payment_method_id, order.customer_id)
    chosen: list[tuple[OrderItem, int]] = []
    for line in items:
        item = item_of_order(ctx, order, line.item_id)
        require_returnable_item(ctx, item, "returned")
        chosen.append((item, _units_taken_back(item, line.quantity, "return")))

    label = _label(ctx, order, "return")
    returned = _open_case(
        ctx, Return, order, reason, refund_payment_method_id=method.id, refund_cents=0, shipment_id=label.id
    )
    session.add(returned)
    session.flush()  # the lines below refer to the return; without relationships the ORM won't order them
    value = 0
    for item, quantity in chosen:
        part, variant = _take_back(ctx, item, quantity, return_id=returned.id)
        value += part.unit_price_cents * part.quantity
        session.add_all([part, variant])
    session.flush()
    # After a partial refund the order may hold less than the items' price; never refund more.
    amount = min(value, sum(net_by_method(session, order.id).values()))
    if amount > 0:
        refund(ctx, order, method, amount, "return", return_id=returned.id)
    returned.refund_cents = max(amount, 0)
    session.add(returned)
    return _refreshed(ctx, order)


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
    session = ctx.session
    order = get_order(ctx, order_id)
    require_delivered_order(order, "exchanged")
    refuse_duplicates([line.item_id for line in items])
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id) if payment_method_id else None
    plan = []
    demand: dict[str, int] = {}
    for line in items:
        item = item_of_order(ctx, order, line.item_id)
        require_returnable_item(ctx, item, "exchanged")
        variant = other_variant(
            ctx,
            item,
            line.new_variant_id,
            same_product="an exchange keeps the product and only changes the variant",
            unchanged="; an exchange must change the variant",
            discontinued="exchanged into",
        )
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
    session.add(exchange)
    session.flush()  # the lines below refer to the exchange and its shipments
    difference = 0
    for item, variant, quantity in plan:
        part, old = _take_back(ctx, item, quantity, exchange_id=exchange.id)
        variant.stock -= quantity
        difference += (variant.price_cents - part.unit_price_cents) * quantity
        new_line = new_order_line(
            ctx,
            order.id,
            variant,
            part.product_name,
            quantity,
            shipment_id=replacement.id,
            exchange_id=exchange.id,
            replaces_item_id=part.id,
        )
        session.add_all([part, old, variant, new_line])
    exchange.price_difference_cents = difference
    exchange.payment_method_id = method.id if method and difference else None
    session.add(exchange)
    session.flush()
    settle_difference(ctx, order, method, difference, "exchange price difference", exchange_id=exchange.id)
    return _refreshed(ctx, order)


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
    session = ctx.session
    order = get_order(ctx, order_id)
    if order.status not in ("shipped", *AFTER_DELIVERY_STATUSES):
        raise WorldError(
            f"Order {order.id} has status '{order.status}'; only shipped or delivered orders can get a partial refund"
        )
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id)
    refund(ctx, order, method, to_cents(amount), f"partial refund: {reason}")
    order.updated_at = iso(ctx.now)
    session.add(order)
    return order_details(session, order)
