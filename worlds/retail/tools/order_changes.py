"""Changing an order before it ships: cancelling it, switching item variants, switching payment."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import PartialFailure, ToolContext, WorldError, iso, sql

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
    get_order_row,
    get_payment_method_of,
    item_of_order,
    other_variant,
    refuse_duplicates,
    reserve_stock,
)
from ..tables import Order, OrderItem, Payment, PaymentMethod, Variant
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
    order = get_order_row(ctx, order_id)
    if order.status == "cancelled":
        raise WorldError(f"Order {order.id} is already cancelled")
    if order.status not in OPEN_STATUSES:
        raise WorldError(
            f"Order {order.id} has status '{order.status}'; only pending or processing orders can be cancelled"
        )
    lines = [item for item in sql.select(ctx, OrderItem, "order_id = ?", (order.id,)) if item.status == "ordered"]
    # Written as the ORM wrote them (the change log's order): it flushed the lines and variants
    # changed so far whenever it read a variant it had not loaded yet.
    writes = sql.Writes(ctx)
    stock: dict[str, int] = {}
    for item in lines:
        if item.variant_id not in stock:
            writes.flush()
            stock[item.variant_id] = sql.get(ctx, Variant, item.variant_id).stock
        stock[item.variant_id] += item.quantity
        writes.update(OrderItem, item.id, status="cancelled")
        writes.update(Variant, item.variant_id, stock=stock[item.variant_id])
    writes.flush()
    queued = ctx.fault == "partial"  # the payment provider did not take the refund
    refunds = refund_everything(ctx, order, "cancellation", queued=queued)
    now = iso(ctx.now)
    changed = {"status": "cancelled", "updated_at": now, "cancelled_at": now, "cancel_reason": reason}
    sql.update(ctx, Order, order.id, **changed)
    order = order._replace(**changed)
    if queued and refunds:
        raise PartialFailure(
            f"Order {order.id} was cancelled and its items restocked, but the refund could not be sent: "
            f"{', '.join(r.id for r in refunds)} queued. Send it with resend_refund."
        )
    return order_details(ctx, order)


@world.tool(idempotent=True, irreversible=True)
def resend_refund(
    ctx: ToolContext,
    payment_id: Annotated[str, Field(description="The queued refund's id (txn_...).", max_length=40)],
) -> OrderDetails:
    """Send a refund that a failure left 'queued' (see get_order_details). Gift card refunds land at
    once; card and PayPal refunds then take 5-7 business days."""
    payment = sql.find(ctx, Payment, payment_id.strip())
    if payment is None or payment.kind != "refund":
        raise WorldError(f"Refund {payment_id} not found")
    if payment.status != "queued":
        raise WorldError(f"Refund {payment.id} is '{payment.status}', not queued; there is nothing to resend")
    send_queued_refund(ctx, payment)
    return order_details(ctx, sql.get(ctx, Order, payment.order_id))


@world.tool(irreversible=True)
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
    order = get_order_row(ctx, order_id)
    if order.status != "pending":
        raise WorldError(f"Order {order.id} has status '{order.status}'; only pending orders can have items changed")
    refuse_duplicates([change.item_id for change in changes])
    plan = []
    demand: dict[str, int] = {}
    stock: dict[str, int] = {}  # the variants read so far: their stock as this call leaves it
    for change in changes:
        item = item_of_order(ctx, order, change.item_id)
        variant = other_variant(ctx, item, change.new_variant_id, "change")
        stock.setdefault(variant.id, variant.stock)
        reserve_stock(demand, variant, item.quantity)
        plan.append((item, variant))

    # Written as the ORM wrote them (the change log's order): queued, and flushed before a read
    # of a row it had not loaded (another variant, the payment method) and at the end.
    writes = sql.Writes(ctx)
    difference = 0
    for item, variant in plan:
        if item.variant_id not in stock:
            writes.flush()
            stock[item.variant_id] = sql.get(ctx, Variant, item.variant_id).stock
        stock[item.variant_id] += item.quantity
        stock[variant.id] -= item.quantity
        difference += (variant.price_cents - item.unit_price_cents) * item.quantity
        writes.update(Variant, item.variant_id, stock=stock[item.variant_id])
        writes.update(Variant, variant.id, stock=stock[variant.id])
        writes.update(
            OrderItem,
            item.id,
            variant_id=variant.id,
            options=dict(variant.options),
            unit_price_cents=variant.price_cents,
        )
    method = None
    if payment_method_id:
        writes.flush()
        method = get_payment_method_of(ctx, payment_method_id, order.customer_id)
    settle_difference(ctx, order, method, difference, "item change")
    updated_at = iso(ctx.now)
    writes.update(Order, order.id, updated_at=updated_at)
    writes.flush()
    return order_details(ctx, order._replace(updated_at=updated_at))


@world.tool(irreversible=True)
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
    order = get_order_row(ctx, order_id)
    if order.status != "pending":
        raise WorldError(f"Order {order.id} has status '{order.status}'; only pending orders can change payment method")
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id)
    others = {m: cents for m, cents in net_by_method(ctx, order.id).items() if cents > 0 and m != method.id}
    if not others:
        raise WorldError(f"Order {order.id} is already paid in full with {method_label(method)} ({method.id})")
    moving = sum(others.values())
    check_can_pay(method, moving, ctx.now)
    charge(ctx, order, method, moving, "payment change")
    for method_id, cents in others.items():
        old = sql.find(ctx, PaymentMethod, method_id)
        assert old is not None, f"payment method {method_id} of order {order.id} is missing"
        refund(ctx, order, old, cents, "payment change")
    updated_at = iso(ctx.now)
    sql.update(ctx, Order, order.id, updated_at=updated_at)
    return order_details(ctx, order._replace(updated_at=updated_at))
