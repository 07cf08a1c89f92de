"""Changing an order before it ships: cancelling it, switching item variants, switching payment."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import PartialFailure, ToolContext, WorldError
from mcpsim.world.toolkit import iso

from .. import world
from ..inputs import ItemChange, OptionalPaymentMethodId, OrderId, PaymentMethodId
from ..ledger import (
    charge,
    check_can_pay,
    method_label,
    net_by_method,
    refund,
    refund_everything,
    send_queued_refund,
    settle_difference,
)
from ..rules import (
    OPEN_STATUSES,
    CancelReason,
    get_order,
    get_payment_method_of,
    item_of_order,
    order_items,
    other_variant,
    refuse_duplicates,
    reserve_stock,
)
from ..tables import Order, Payment, PaymentMethod, Variant
from ..views import OrderDetails, order_details


@world.tool(destructive=True, partial_failures=True, irreversible=True)
def cancel_order(
    ctx: ToolContext,
    order_id: OrderId,
    reason: Annotated[CancelReason, Field(description="Why the customer cancels.")],
) -> OrderDetails:
    """Cancel a pending or processing order. An order that has shipped or been delivered cannot be
    cancelled (offer a return after delivery instead). Everything paid is refunded to the payment
    methods that paid it (gift cards at once, cards and PayPal in 5-7 business days) and the
    items go back into stock. If the refund cannot be sent, the order is still cancelled and the
    refund stays 'queued': send it with resend_refund."""
    session = ctx.session
    order = get_order(ctx, order_id)
    if order.status == "cancelled":
        raise WorldError(f"Order {order.id} is already cancelled")
    if order.status not in OPEN_STATUSES:
        raise WorldError(
            f"Order {order.id} has status '{order.status}'; only pending or processing orders can be cancelled"
        )
    for item in order_items(session, order.id):
        if item.status != "ordered":
            continue
        variant = ctx.get(Variant, item.variant_id)
        variant.stock += item.quantity
        item.status = "cancelled"
        session.add_all([variant, item])
    queued = ctx.fault == "partial"  # the payment provider did not take the refund
    refunds = refund_everything(ctx, order, "cancellation", queued=queued)
    order.status = "cancelled"
    order.cancelled_at = order.updated_at = iso(ctx.now)
    order.cancel_reason = reason
    session.add(order)
    if queued and refunds:
        raise PartialFailure(
            f"Order {order.id} was cancelled and its items restocked, but the refund could not be sent: "
            f"{', '.join(r.id for r in refunds)} queued. Send it with resend_refund."
        )
    return order_details(session, order)


@world.tool(idempotent=True, irreversible=True)
def resend_refund(
    ctx: ToolContext,
    payment_id: Annotated[str, Field(description="The queued refund's id (txn_...).", max_length=40)],
) -> OrderDetails:
    """Send a refund that a failure left 'queued' (see get_order_details). Gift card refunds land at
    once; card and PayPal refunds then take 5-7 business days."""
    session = ctx.session
    payment = session.get(Payment, payment_id.strip())
    if payment is None or payment.kind != "refund":
        raise WorldError(f"Refund {payment_id} not found")
    if payment.status != "queued":
        raise WorldError(f"Refund {payment.id} is '{payment.status}', not queued; there is nothing to resend")
    send_queued_refund(ctx, payment)
    return order_details(session, ctx.get(Order, payment.order_id))


@world.tool()
def modify_pending_order_items(
    ctx: ToolContext,
    order_id: OrderId,
    changes: Annotated[
        list[ItemChange],
        Field(min_length=1, max_length=10, description="Which order lines change to which variant."),
    ],
    payment_method_id: OptionalPaymentMethodId = None,
) -> OrderDetails:
    """Switch items of a pending order to another variant of the same product (another size or
    color, say). The new variant must be available and in stock; stock moves from the new variant
    to the old one. If the new variants cost more, the difference is charged to payment_method_id;
    if less, it is refunded to it (an original payment method of the order, or a gift card).
    Processing orders can no longer be changed."""
    session = ctx.session
    order = get_order(ctx, order_id)
    if order.status != "pending":
        raise WorldError(f"Order {order.id} has status '{order.status}'; only pending orders can have items changed")
    refuse_duplicates([change.item_id for change in changes])
    plan = []
    demand: dict[str, int] = {}
    for change in changes:
        item = item_of_order(ctx, order, change.item_id)
        variant = other_variant(
            ctx,
            item,
            change.new_variant_id,
            same_product="an item can only change to another variant of the same product",
            unchanged="",
            discontinued="ordered",
        )
        reserve_stock(demand, variant, item.quantity)
        plan.append((item, variant))

    difference = 0
    for item, variant in plan:
        old = ctx.get(Variant, item.variant_id)
        old.stock += item.quantity
        variant.stock -= item.quantity
        difference += (variant.price_cents - item.unit_price_cents) * item.quantity
        item.variant_id, item.options, item.unit_price_cents = variant.id, dict(variant.options), variant.price_cents
        session.add_all([old, variant, item])
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id) if payment_method_id else None
    settle_difference(ctx, order, method, difference, "item change")
    order.updated_at = iso(ctx.now)
    session.add(order)
    return order_details(session, order)


@world.tool()
def modify_pending_order_payment(
    ctx: ToolContext,
    order_id: OrderId,
    payment_method_id: Annotated[
        PaymentMethodId, Field(description="The customer's payment method to pay with instead.")
    ],
) -> OrderDetails:
    """Pay for a pending order with another of the customer's payment methods: the new method is
    charged what the order holds and the old ones are refunded in full. A gift card must cover the
    whole amount; an expired card cannot be used."""
    session = ctx.session
    order = get_order(ctx, order_id)
    if order.status != "pending":
        raise WorldError(f"Order {order.id} has status '{order.status}'; only pending orders can change payment method")
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id)
    others = {m: cents for m, cents in net_by_method(session, order.id).items() if cents > 0 and m != method.id}
    if not others:
        raise WorldError(f"Order {order.id} is already paid in full with {method_label(method)} ({method.id})")
    moving = sum(others.values())
    check_can_pay(method, moving, ctx.now)
    charge(ctx, order, method, moving, "payment change")
    for method_id, cents in others.items():
        old = session.get(PaymentMethod, method_id)
        assert old is not None, f"payment method {method_id} of order {order.id} is missing"
        refund(ctx, order, old, cents, "payment change")
    order.updated_at = iso(ctx.now)
    session.add(order)
    return order_details(session, order)
