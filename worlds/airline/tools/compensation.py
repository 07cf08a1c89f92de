"""Compensation certificates for delayed and cancelled flights."""

from __future__ import annotations

from sqlmodel import select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import FlightDate, FlightNumber, ReservationId, UserId
from ..ledger import issue_certificate
from ..rules import (
    COMPENSATION_CENTS,
    COMPENSATION_MIN_DELAY,
    dollars,
    get_flight,
    get_reservation,
    get_user,
    iso,
    legs_of,
)
from ..tables import Compensation, FlightChange
from ..views import CertificateView


@world.tool(irreversible=True)
def issue_compensation_certificate(
    ctx: ToolContext,
    user_id: UserId,
    reservation_id: ReservationId,
    flight_number: FlightNumber,
    date: FlightDate,
) -> CertificateView:
    """Issue a travel certificate to the user for a disrupted flight of one of their reservations:
    $100 per passenger if the airline cancelled the flight, $50 per passenger if it is delayed by
    3 hours or more. Only silver, gold and platinum members, reservations with travel insurance, or
    business-cabin reservations are eligible. The flight must be on the reservation, or have been
    on it before a flight change. At most one certificate per reservation and flight.
    The certificate is valid for one year and can pay for a future booking."""
    session = ctx.session
    user = get_user(session, user_id)
    reservation = get_reservation(session, reservation_id)
    if reservation.user_id != user.id:
        raise WorldError(f"Reservation {reservation.id} does not belong to user {user.id}")
    flight = get_flight(session, flight_number, date)
    moved_off = session.exec(
        select(FlightChange.old_flight_id).where(FlightChange.reservation_id == reservation.id)
    ).all()
    if flight.id not in {f.id for _, f in legs_of(session, reservation.id)} | set(moved_off):
        raise WorldError(f"Flight {flight.flight_number} on {flight.date} is not part of reservation {reservation.id}")
    if flight.status == "cancelled":
        disruption = "cancelled"
    elif flight.delay_minutes >= COMPENSATION_MIN_DELAY:
        disruption = "delayed"
    elif flight.delay_minutes > 0:
        raise WorldError(
            f"Flight {flight.flight_number} on {flight.date} is delayed by {flight.delay_minutes} minutes; "
            "compensation needs a delay of at least 3 hours"
        )
    else:
        raise WorldError(f"Flight {flight.flight_number} on {flight.date} was neither cancelled nor delayed")
    if user.membership == "regular" and not reservation.insurance and reservation.cabin != "business":
        raise WorldError(
            "Compensation is only for silver, gold and platinum members, reservations with travel insurance, or "
            f"business-cabin reservations; reservation {reservation.id} is none of these"
        )
    existing = session.exec(
        select(Compensation).where(Compensation.reservation_id == reservation.id, Compensation.flight_id == flight.id)
    ).first()
    if existing is not None:
        raise WorldError(
            f"Reservation {reservation.id} was already compensated for flight {flight.flight_number} on "
            f"{flight.date} (certificate {existing.certificate_id})"
        )
    amount = COMPENSATION_CENTS[disruption] * reservation.passenger_count
    certificate = issue_certificate(ctx, user.id, amount, "compensation")
    compensation = Compensation(
        id=ctx.new_id("compensation"),
        user_id=user.id,
        reservation_id=reservation.id,
        flight_id=flight.id,
        disruption=disruption,
        amount_cents=amount,
        certificate_id=certificate.id,
        created_at=iso(ctx.now),
    )
    ctx.add(compensation)
    session.flush()
    return CertificateView.from_row(
        compensation,
        flight_number=flight.flight_number,
        date=flight.date,
        amount=dollars(amount),
        expires_on=certificate.expires_on or "",
    )
