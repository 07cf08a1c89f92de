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

from sqlalchemy import literal_column
from sqlmodel import Session, select

from mcpsim.world import ToolContext, WorldError

from .common import CERTIFICATE_VALIDITY_DAYS, dollars, iso, money, new_id
from .tables import Payment, PaymentMethod, Reservation
from .views import PaymentMethodView


def method_label(method: PaymentMethod) -> str:
    if method.kind == "credit_card":
        return f"{method.brand} ending in {method.last4}"
    if method.kind == "gift_card":
        return f"Gift card {method.id}"
    return f"Travel certificate {method.id}"


def card_expired(method: PaymentMethod, now: datetime) -> bool:
    if method.kind != "credit_card" or method.exp_year is None or method.exp_month is None:
        return False
    return (method.exp_year, method.exp_month) < (now.year, now.month)


def certificate_state(method: PaymentMethod, now: datetime) -> str:
    """active, used or expired (an active certificate past its date is expired)."""
    if method.status != "active":
        return method.status
    if method.expires_on and method.expires_on < now.date().isoformat():
        return "expired"
    return "active"


def payment_method_view(method: PaymentMethod, now: datetime) -> PaymentMethodView:
    if method.kind == "credit_card":
        expired = card_expired(method, now)
        return PaymentMethodView(
            payment_method_id=method.id,
            kind=method.kind,
            description=method_label(method),
            brand=method.brand,
            last4=method.last4,
            expires=f"{method.exp_month:02d}/{method.exp_year}",
            expired=expired,
            usable=not expired,
        )
    balance = method.balance_cents or 0
    if method.kind == "gift_card":
        return PaymentMethodView(
            payment_method_id=method.id,
            kind=method.kind,
            description=f"Gift card (balance {money(balance)})",
            balance=dollars(balance),
            usable=balance > 0,
        )
    state = certificate_state(method, now)
    return PaymentMethodView(
        payment_method_id=method.id,
        kind=method.kind,
        description=f"Travel certificate {money(balance)} ({state}, valid until {method.expires_on})",
        expires=method.expires_on,
        expired=state == "expired",
        balance=dollars(balance),
        status=state,
        usable=state == "active",
    )


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
        id=new_id(ctx.ids, "payment"),
        reservation_id=reservation.id,
        payment_method_id=method.id,
        kind=kind,
        amount_cents=cents,
        purpose=purpose,
        created_at=iso(ctx.now),
    )
    ctx.session.add(payment)
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
        ctx.session.add(method)
    elif method.kind == "certificate":
        method.balance_cents = 0  # single use: whatever it did not cover is forfeited
        method.status = "used"
        ctx.session.add(method)
    return _payment(ctx, reservation, method, "charge", cents, purpose)


def refund(ctx: ToolContext, reservation: Reservation, method: PaymentMethod, cents: int, purpose: str) -> Payment:
    if method.kind == "certificate":
        raise AssertionError("certificates are refunded as new certificates")
    if method.kind == "gift_card":
        method.balance_cents = (method.balance_cents or 0) + cents
        ctx.session.add(method)
    return _payment(ctx, reservation, method, "refund", cents, purpose)


def issue_certificate(ctx: ToolContext, user_id: str, cents: int, source: str) -> PaymentMethod:
    certificate = PaymentMethod(
        id=new_id(ctx.ids, "certificate"),
        user_id=user_id,
        kind="certificate",
        balance_cents=cents,
        status="active",
        expires_on=(ctx.now + timedelta(days=CERTIFICATE_VALIDITY_DAYS)).date().isoformat(),
        source=source,
        created_at=iso(ctx.now),
    )
    ctx.session.add(certificate)
    ctx.session.flush()
    return certificate


def net_by_method(session: Session, reservation_id: str) -> dict[str, int]:
    """What each payment method has paid for the reservation and not yet had back, by first charge."""
    net: dict[str, int] = {}
    query = select(Payment).where(Payment.reservation_id == reservation_id).order_by(literal_column("rowid"))
    for payment in session.exec(query):
        sign = 1 if payment.kind == "charge" else -1
        net[payment.payment_method_id] = net.get(payment.payment_method_id, 0) + sign * payment.amount_cents
    return net


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
    method = session.get(PaymentMethod, payment_method_id.strip())
    if method is None:
        raise WorldError(f"Payment method {payment_method_id} not found")
    if method.user_id != reservation.user_id:
        raise WorldError(f"Payment method {payment_method_id} does not belong to user {reservation.user_id}")
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
