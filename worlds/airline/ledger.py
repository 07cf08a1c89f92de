"""Money on reservations: what a payment method can pay, charges, refunds and new certificates.

- A credit card can pay if it has not expired. A gift card pays from its balance, which never
  goes negative. A travel certificate is single-use: it pays at most its value, for a new booking
  only, at most one per reservation, and whatever it does not cover is forfeited.
- Changes (fare differences, fees, bags, insurance) are paid by a credit card or gift card.
- Refunds go back to the credit cards and gift cards that paid (gift cards at once); the share a
  certificate paid comes back as a new certificate.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session

from mcpsim.world import ToolContext, WorldError
from mcpsim.world import net_by_method as net_payments_by_method

from .rules import (
    CERTIFICATE_VALIDITY_DAYS,
    card_expired,
    certificate_state,
    get_payment_method_of,
    iso,
    method_label,
    money,
    payments_of,
)
from .tables import Payment, PaymentMethod, Reservation


def check_can_pay(method: PaymentMethod, amount_cents: int, now: datetime, *, booking: bool) -> None:
    """Refuse a payment the method cannot make. Certificates only pay for new bookings."""
    if amount_cents <= 0:
        raise WorldError("A payment must be for a positive amount")
    if method.kind == "credit_card":
        if card_expired(method, now):
            raise WorldError(
                f"{method_label(method)} ({method.id}) expired in {method.exp_month:02d}/{method.exp_year} "
                "and cannot be charged"
            )
    elif method.kind == "gift_card":
        if (method.balance_cents or 0) < amount_cents:
            raise WorldError(
                f"Gift card {method.id} has a balance of {money(method.balance_cents or 0)}, "
                f"less than the {money(amount_cents)} to pay"
            )
    else:
        if not booking:
            raise WorldError(
                f"Travel certificate {method.id} can only pay for a new booking; changes, bags and insurance "
                "are paid by credit card or gift card"
            )
        state = certificate_state(method, now)
        if state != "active":
            raise WorldError(f"Travel certificate {method.id} is {state} and cannot be used")
        if (method.balance_cents or 0) < amount_cents:
            raise WorldError(
                f"Travel certificate {method.id} is worth {money(method.balance_cents or 0)}; it cannot pay "
                f"{money(amount_cents)}"
            )


def _payment(
    ctx: ToolContext, reservation: Reservation, method: PaymentMethod, kind: str, cents: int, purpose: str
) -> Payment:
    payment = Payment(
        id=ctx.new_id("payment"),
        reservation_id=reservation.id,
        payment_method_id=method.id,
        kind=kind,
        amount_cents=cents,
        purpose=purpose,
        created_at=iso(ctx.now),
    )
    ctx.add(payment)
    return payment


def charge(
    ctx: ToolContext,
    reservation: Reservation,
    method: PaymentMethod,
    cents: int,
    purpose: str,
    *,
    booking: bool = False,
) -> Payment:
    if method.user_id != reservation.user_id:
        raise WorldError(f"Payment method {method.id} does not belong to user {reservation.user_id}")
    check_can_pay(method, cents, ctx.now, booking=booking)
    if method.kind == "gift_card":
        method.balance_cents = (method.balance_cents or 0) - cents
        ctx.add(method)
    elif method.kind == "certificate":
        method.balance_cents = 0  # single use: whatever it did not cover is forfeited
        method.status = "used"
        ctx.add(method)
    return _payment(ctx, reservation, method, "charge", cents, purpose)


def refund(ctx: ToolContext, reservation: Reservation, method: PaymentMethod, cents: int, purpose: str) -> Payment:
    if method.kind == "certificate":
        raise AssertionError("certificates are refunded as new certificates")
    if method.kind == "gift_card":
        method.balance_cents = (method.balance_cents or 0) + cents
        ctx.add(method)
    return _payment(ctx, reservation, method, "refund", cents, purpose)


def issue_certificate(ctx: ToolContext, user_id: str, cents: int, source: str) -> PaymentMethod:
    certificate = PaymentMethod(
        id=ctx.new_id("certificate"),
        user_id=user_id,
        kind="certificate",
        balance_cents=cents,
        status="active",
        expires_on=(ctx.now + timedelta(days=CERTIFICATE_VALIDITY_DAYS)).date().isoformat(),
        source=source,
        created_at=iso(ctx.now),
    )
    ctx.add(certificate)
    ctx.session.flush()
    return certificate


def refund_as_certificate(ctx: ToolContext, reservation: Reservation, cents: int, purpose: str) -> PaymentMethod:
    """Refund the share a travel certificate paid as a new certificate, recorded as a refund to it."""
    certificate = issue_certificate(ctx, reservation.user_id, cents, "refund")
    _payment(ctx, reservation, certificate, "refund", cents, purpose)
    return certificate


def net_by_method(session: Session, reservation_id: str) -> dict[str, int]:
    """What each payment method has paid for the reservation and not yet had back, by first charge."""
    return net_payments_by_method(payments_of(session, reservation_id))


def change_method(
    session: Session, reservation: Reservation, payment_method_id: str | None, cents: int, now: datetime
) -> PaymentMethod | None:
    """The method that pays (cents > 0) or receives (cents < 0) a change's difference. A charge
    needs a usable credit card or gift card of the user; a refund goes to a credit card or gift
    card that paid for this reservation, or to any gift card of the user."""
    if cents == 0:
        return None
    if payment_method_id is None:
        what = "pays" if cents > 0 else "receives"
        raise WorldError(
            f"This change {'costs' if cents > 0 else 'refunds'} {money(abs(cents))}; give the payment method that "
            f"{what} it"
        )
    method = get_payment_method_of(session, payment_method_id, reservation.user_id)
    if cents > 0:
        check_can_pay(method, cents, now, booking=False)
        return method
    if method.kind == "certificate":
        raise WorldError("A refund cannot go to a travel certificate; choose a credit card or gift card")
    if method.kind == "credit_card" and net_by_method(session, reservation.id).get(method.id, 0) <= 0:
        raise WorldError(
            f"Refunds go to a card that paid for reservation {reservation.id} or to a gift card; "
            f"{method_label(method)} did not pay for it"
        )
    return method
