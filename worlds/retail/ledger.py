"""Money on orders: charges and refunds, and the rules that keep them honest.

A refund never exceeds what the order's payments still hold (charges minus refunds). It goes back
to a payment method that paid for the order (up to what that method paid) or, as store credit,
to any gift card of the customer. A charge needs a card that has not expired or a gift card whose
balance covers it; gift cards are debited and credited at once.

Orders, payment methods and payments here are plain rows (`mcpsim.world.sql`); payments and
balances are written with plain SQL at once, in the order the ORM's flushes wrote them before.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mcpsim.world import ToolContext, WorldError, iso, money, sql
from mcpsim.world import net_by_method as net_payments_by_method

from .tables import Payment, PaymentMethod


def method_label(method: PaymentMethod) -> str:
    if method.kind == "credit_card":
        return f"{method.brand} ending in {method.last4}"
    if method.kind == "paypal":
        return f"PayPal ({method.paypal_email})"
    code = method.gift_card_code or ""
    return f"Gift card ending in {code[-4:]}"


def card_expired(method: PaymentMethod, now: datetime) -> bool:
    if method.kind != "credit_card" or method.exp_year is None or method.exp_month is None:
        return False
    return (method.exp_year, method.exp_month) < (now.year, now.month)


def order_payments(session: sql.Source, order_id: str) -> list[Any]:
    """The order's payments (plain rows, read only), in the order they were made."""
    return sql.select(session, Payment, "order_id = ?", (order_id,))


def net_by_method(session: sql.Source, order_id: str) -> dict[str, int]:
    """What each payment method has paid for the order and not yet had back, by first charge."""
    return net_payments_by_method(order_payments(session, order_id))


def check_can_pay(method: PaymentMethod, amount_cents: int, now: datetime) -> None:
    if card_expired(method, now):
        raise WorldError(
            f"{method_label(method)} ({method.id}) expired in {method.exp_month:02d}/{method.exp_year} "
            "and cannot be charged"
        )
    if method.kind == "gift_card" and (method.balance_cents or 0) < amount_cents:
        raise WorldError(
            f"Gift card {method.id} has a balance of {money(method.balance_cents or 0)}, "
            f"less than the {money(amount_cents)} to pay"
        )


def charge(
    ctx: ToolContext,
    order: Any,
    method: Any,
    amount_cents: int,
    reason: str,
    *,
    exchange_id: str | None = None,
) -> Any:
    if method.customer_id != order.customer_id:
        raise WorldError(f"Payment method {method.id} does not belong to customer {order.customer_id}")
    if amount_cents <= 0:
        raise WorldError("A charge must be for a positive amount")
    check_can_pay(method, amount_cents, ctx.now)
    debit = amount_cents if method.kind == "gift_card" else 0
    return _record_payment(
        ctx, order, method, "charge", amount_cents, "captured", reason, -debit, exchange_id=exchange_id
    )


def refund(
    ctx: ToolContext,
    order: Any,
    method: Any,
    amount_cents: int,
    reason: str,
    *,
    return_id: str | None = None,
    exchange_id: str | None = None,
    queued: bool = False,
) -> Any:
    """A refund to `method`; `queued` (a partial failure) records it without sending it: no gift
    card credit yet, status 'queued' until resend_refund."""
    if method.customer_id != order.customer_id:
        raise WorldError(f"Payment method {method.id} does not belong to customer {order.customer_id}")
    if amount_cents <= 0:
        raise WorldError("A refund must be for a positive amount")
    net = net_by_method(ctx, order.id)
    refundable = sum(net.values())
    if amount_cents > refundable:
        raise WorldError(
            f"A refund of {money(amount_cents)} exceeds what remains refundable on order {order.id}: "
            f"{money(max(refundable, 0))}"
        )
    if method.kind != "gift_card":
        if method.id not in net:
            raise WorldError(
                f"{method_label(method)} ({method.id}) did not pay for order {order.id}; refunds go to a payment "
                "method used for the order or to a gift card"
            )
        if amount_cents > net[method.id]:
            raise WorldError(
                f"Only {money(max(net[method.id], 0))} paid with {method_label(method)} ({method.id}) remains "
                f"refundable on order {order.id}"
            )
    credit = amount_cents if method.kind == "gift_card" and not queued else 0
    # Gift card credit lands at once; banks and PayPal take 5-7 business days.
    status = "queued" if queued else "completed" if method.kind == "gift_card" else "pending"
    return _record_payment(
        ctx, order, method, "refund", amount_cents, status, reason, credit, return_id=return_id, exchange_id=exchange_id
    )


def _record_payment(
    ctx: ToolContext,
    order: Any,
    method: Any,
    kind: str,
    amount_cents: int,
    status: str,
    reason: str,
    balance_change: int,
    **links: str | None,
) -> Any:
    """Record a payment (returned as a plain row) and move a gift card's balance by
    `balance_change`: the payment first, then the card, as the ORM's flush ordered them."""
    payment = sql.insert(
        ctx,
        Payment,
        id=ctx.new_id("payment"),
        order_id=order.id,
        payment_method_id=method.id,
        kind=kind,
        amount_cents=amount_cents,
        status=status,
        reason=reason,
        created_at=iso(ctx.now),
        **links,
    )
    if balance_change:
        sql.update(ctx, PaymentMethod, method.id, balance_cents=(method.balance_cents or 0) + balance_change)
    return payment


def refund_everything(ctx: ToolContext, order: Any, reason: str, *, queued: bool = False) -> list[Any]:
    """Give every payment method back what it paid for the order and has not had back (written
    with plain SQL: the refunds come back as plain rows)."""
    refunds = []
    for method_id, cents in net_by_method(ctx, order.id).items():
        if cents > 0:
            method = sql.find(ctx, PaymentMethod, method_id)
            assert method is not None, f"payment {method_id} of {order.id} has no payment method"
            refunds.append(refund(ctx, order, method, cents, reason, queued=queued))
    return refunds


def send_queued_refund(ctx: ToolContext, payment: Any) -> None:
    """Send a refund a partial failure left queued (a plain row): gift cards are credited at once."""
    method = sql.find(ctx, PaymentMethod, payment.payment_method_id)
    assert method is not None, f"refund {payment.id} has no payment method"
    sql.update(ctx, Payment, payment.id, status="completed" if method.kind == "gift_card" else "pending")
    if method.kind == "gift_card":  # written after the payment, as the ORM's flush ordered them
        sql.update(ctx, PaymentMethod, method.id, balance_cents=(method.balance_cents or 0) + payment.amount_cents)


def settle_difference(
    ctx: ToolContext,
    order: Any,
    method: Any | None,
    difference_cents: int,
    reason: str,
    *,
    exchange_id: str | None = None,
) -> Any:
    """Charge a positive price difference or refund a negative one (capped at what remains paid)."""
    if difference_cents == 0:
        return None
    if method is None:
        if difference_cents > 0:
            raise WorldError(
                f"The new items cost {money(difference_cents)} more; give a payment_method_id to pay the difference"
            )
        raise WorldError(
            f"The new items cost {money(-difference_cents)} less; give a payment_method_id to receive the difference"
        )
    if difference_cents > 0:
        return charge(ctx, order, method, difference_cents, reason, exchange_id=exchange_id)
    refundable = sum(net_by_method(ctx, order.id).values())
    amount = min(-difference_cents, refundable)
    if amount <= 0:
        return None
    return refund(ctx, order, method, amount, reason, exchange_id=exchange_id)
