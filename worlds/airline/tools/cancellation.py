"""Cancelling a reservation: the refund rules, a quote, and the cancellation itself.

The refund, in order of precedence:
1. A reservation with a departed flight cannot be cancelled at all.
2. Everything paid comes back if the reservation was booked less than 24 hours ago, or if the
   airline cancelled one of its flights.
3. Otherwise the fare comes back in full for a flex fare, or for an insured trip cancelled for
   illness or a family emergency; nothing of a basic fare; for a standard fare, the fare minus a
   cancellation fee per passenger by membership tier (regular and silver $100, gold $50, platinum
   none), and nothing within 24 hours of the first departure. Paid bag fees always come back;
   insurance and change fees do not.
Refunds go to the credit cards and gift cards that paid, in the order they were charged, up to
what each paid; the remainder (the share a certificate paid) comes back as a new certificate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import ReservationId
from ..ledger import net_by_method, refund, refund_as_certificate
from ..rules import (
    BAG_FEE_CENTS,
    CANCEL_FEE_CENTS,
    FREE_CANCEL_WINDOW,
    INSURED_REASONS,
    LATE_CANCEL_WINDOW,
    CancelReason,
    dollars,
    expected_departure,
    get_reservation,
    get_user,
    has_departed,
    iso,
    legs_of,
    method_label,
    money,
    parse,
    seats,
    set_seats,
)
from ..tables import PaymentMethod, Reservation
from ..views import CancellationQuote, CancellationResult, RefundLine


@dataclass
class Refund:
    rule: str
    fare: int
    bags: int
    other: int
    to_methods: list[tuple[PaymentMethod, int]] = field(default_factory=list)
    to_certificate: int = 0

    @property
    def total(self) -> int:
        return self.fare + self.bags + self.other


def compute_refund(session: Session, reservation: Reservation, reason: str, now: datetime) -> Refund:
    if reservation.status == "cancelled":
        raise WorldError(f"Reservation {reservation.id} is already cancelled")
    legs = legs_of(session, reservation.id)
    for _, flight in legs:
        if has_departed(flight, now):
            raise WorldError(
                f"Flight {flight.flight_number} on {flight.date} of reservation {reservation.id} has already "
                "departed; a reservation with a departed flight cannot be cancelled"
            )
    airline_cancelled = [f for _, f in legs if f.status == "cancelled"]
    if reason == "airline cancelled flight" and not airline_cancelled:
        raise WorldError(f"No flight of reservation {reservation.id} has been cancelled by the airline")
    net = net_by_method(session, reservation.id)
    paid = sum(net.values())
    count = reservation.passenger_count
    fare_total = sum(leg.price_cents for leg, _ in legs) * count
    bags = reservation.paid_bags * BAG_FEE_CENTS
    booked = parse(reservation.created_at)

    if airline_cancelled:
        f = airline_cancelled[0]
        result = Refund(
            f"Flight {f.flight_number} on {f.date} was cancelled by the airline: everything paid is refunded",
            fare_total,
            bags,
            max(0, paid - fare_total - bags),
        )
    elif now - booked <= FREE_CANCEL_WINDOW:
        result = Refund(
            "Booked less than 24 hours ago: everything paid is refunded",
            fare_total,
            bags,
            max(0, paid - fare_total - bags),
        )
    elif reservation.fare == "flex":
        result = Refund(
            "Flex fare: the fare and paid bags are refunded; insurance and fees are not", fare_total, bags, 0
        )
    elif reservation.insurance and reason in INSURED_REASONS:
        result = Refund(
            f"Travel insurance covers cancellation for {reason}: the fare and paid bags are refunded; "
            "the insurance itself is not",
            fare_total,
            bags,
            0,
        )
    elif reservation.fare == "basic":
        result = Refund("Basic fare: the fare is not refundable; only paid bags are refunded", 0, bags, 0)
    else:
        first = expected_departure(legs[0][1]) if legs else None
        if first is not None and first - now < LATE_CANCEL_WINDOW:
            result = Refund(
                "Standard fare cancelled less than 24 hours before departure: the fare is not "
                "refundable; only paid bags are refunded",
                0,
                bags,
                0,
            )
        else:
            tier = get_user(session, reservation.user_id).membership
            fee = CANCEL_FEE_CENTS[tier] * count
            result = Refund(
                f"Standard fare: the fare minus a cancellation fee of {money(CANCEL_FEE_CENTS[tier])} per "
                f"passenger ({tier} member), plus paid bags",
                max(0, fare_total - fee),
                bags,
                0,
            )
    if result.total > paid:  # never more than what the reservation still holds
        result.fare = min(result.fare, paid)
        result.bags = min(result.bags, paid - result.fare)
        result.other = min(result.other, paid - result.fare - result.bags)

    left = result.total
    for method_id, cents in net.items():
        method = session.get(PaymentMethod, method_id)
        assert method is not None
        if method.kind == "certificate" or cents <= 0 or left <= 0:
            continue
        amount = min(cents, left)
        result.to_methods.append((method, amount))
        left -= amount
    result.to_certificate = left
    return result


def _quote(reservation: Reservation, reason: str, r: Refund) -> dict[str, Any]:
    return {
        "reservation_id": reservation.id,
        "reason": reason,
        "rule": r.rule,
        "fare_refund": dollars(r.fare),
        "baggage_refund": dollars(r.bags),
        "other_refund": dollars(r.other),
        "total_refund": dollars(r.total),
        "refunds": [
            RefundLine(payment_method_id=m.id, method=method_label(m), amount=dollars(c)) for m, c in r.to_methods
        ],
        "new_certificate_amount": dollars(r.to_certificate),
    }


@world.tool(read_only=True, idempotent=True)
def quote_cancellation(ctx: ToolContext, reservation_id: ReservationId, reason: CancelReason) -> CancellationQuote:
    """What cancelling a reservation now, for this reason, would refund, and to which payment
    methods, without cancelling anything. Everything paid comes back within 24 hours of booking or
    when the airline cancelled a flight of it. Otherwise: flex fares get the fare back; insured
    trips cancelled for illness or a family emergency get the fare back; basic fares get nothing;
    standard fares get the fare minus $100 per passenger (gold members $50, platinum none), and
    nothing within 24 hours of departure. Fees paid for extra bags always come back; insurance and
    change fees do not. A reservation with a departed flight cannot be cancelled."""
    reservation = get_reservation(ctx.session, reservation_id)
    return CancellationQuote(**_quote(reservation, reason, compute_refund(ctx.session, reservation, reason, ctx.now)))


@world.tool(destructive=True, irreversible=True)
def cancel_reservation(ctx: ToolContext, reservation_id: ReservationId, reason: CancelReason) -> CancellationResult:
    """Cancel a whole confirmed reservation (every flight and passenger; there are no partial
    cancellations), with the user's reason. The refund follows the rules of quote_cancellation:
    it goes back to the credit cards and gift cards that paid (gift cards at once, cards in 5 to 7
    business days), and the share a travel certificate paid comes back as a new certificate. The
    seats are released. 'airline cancelled flight' is only a valid reason if the airline did
    cancel a flight of the reservation."""
    session = ctx.session
    reservation = get_reservation(session, reservation_id)
    r = compute_refund(session, reservation, reason, ctx.now)
    for method, cents in r.to_methods:
        refund(ctx, reservation, method, cents, "cancellation")
    certificate = None
    if r.to_certificate > 0:
        certificate = refund_as_certificate(ctx, reservation, r.to_certificate, "cancellation")
    for _, flight in legs_of(session, reservation.id):
        if flight.status != "cancelled":
            set_seats(flight, reservation.cabin, seats(flight, reservation.cabin) + reservation.passenger_count)
            ctx.add(flight)
    reservation.status = "cancelled"
    reservation.cancelled_at = iso(ctx.now)
    reservation.cancel_reason = reason
    reservation.updated_at = iso(ctx.now)
    ctx.add(reservation)
    session.flush()
    return CancellationResult(
        **_quote(reservation, reason, r),
        status=reservation.status,
        new_certificate_id=certificate.id if certificate else None,
    )
