"""Booking a new reservation."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import CabinArg, FareArg, FlightRef, PassengerIn, PaymentIn, UserId
from ..itinerary import check_connections, check_seats, check_sellable, resolve, shape
from ..ledger import charge, check_can_pay
from ..rules import (
    BAG_FEE_CENTS,
    INSURANCE_CENTS,
    MAX_BAGS_PER_PASSENGER,
    MAX_LEGS,
    MAX_PASSENGERS,
    free_bags_per_passenger,
    get_payment_method_of,
    get_user,
    iso,
    money,
    paid_bags_needed,
    parse_date,
    price_of,
    reservation_code,
    seats,
    set_seats,
    to_cents,
)
from ..tables import Passenger, PaymentMethod, Reservation, ReservationFlight
from ..views import ReservationDetails, reservation_details


def check_passengers(passengers: list[PassengerIn], today: date) -> list[tuple[str, str, str]]:
    people: list[tuple[str, str, str]] = []
    for p in passengers:
        born = parse_date(p.date_of_birth)
        if born >= today or born.year < 1900:
            raise WorldError(f"{p.date_of_birth} is not a plausible date of birth for {p.first_name} {p.last_name}")
        person = (p.first_name.strip(), p.last_name.strip(), p.date_of_birth)
        if not person[0] or not person[1]:
            raise WorldError("Every passenger needs a first and a last name")
        if any(
            q[0].lower() == person[0].lower() and q[1].lower() == person[1].lower() and q[2] == person[2]
            for q in people
        ):
            raise WorldError(f"Passenger {person[0]} {person[1]} is listed twice")
        people.append(person)
    return people


@world.tool(irreversible=True)
def book_reservation(
    ctx: ToolContext,
    user_id: UserId,
    flights: Annotated[
        list[FlightRef],
        Field(
            min_length=1,
            max_length=MAX_LEGS,
            description="Every flight of the trip in travel order (a round "
            "trip lists the outbound then the return flights).",
        ),
    ],
    cabin: CabinArg,
    fare: FareArg,
    passengers: Annotated[
        list[PassengerIn], Field(min_length=1, max_length=MAX_PASSENGERS, description="The travellers (1-6).")
    ],
    payments: Annotated[
        list[PaymentIn],
        Field(
            min_length=1, max_length=3, description="Who pays how much; the amounts must add up to the total exactly."
        ),
    ],
    checked_bags: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_BAGS_PER_PASSENGER * MAX_PASSENGERS,
            description="Checked bags for all passengers together (at most 4 per passenger).",
        ),
    ] = 0,
    insurance: Annotated[bool, Field(description="Buy travel insurance ($30 per passenger).")] = False,
) -> ReservationDetails:
    """Book flights for the user. Every flight must be in travel order, connect (same airport, at
    least 60 minutes), not be cancelled or departed, and depart more than an hour from now, with
    enough seats in the cabin. The basic fare exists only in economy. The total is the fare of
    each flight for the cabin and fare times the passengers, plus $50 per checked bag beyond the
    free allowance (per passenger, by the user's membership tier and the cabin), plus $30 per
    passenger for insurance. Payments: at most three methods of the user adding up to the total
    exactly; a credit card that has not expired, gift cards up to their balance, and at most one
    travel certificate, up to its value (a certificate is used once: any value it does not cover
    is forfeited). Seats are taken at once."""
    session = ctx.session
    user = get_user(session, user_id)
    legs = resolve(session, flights)
    for flight in legs:
        check_sellable(flight, ctx.now)
    check_connections(legs)
    origin, destination, trip_type = shape(legs)
    if fare == "basic" and cabin != "economy":
        raise WorldError("The basic fare exists only in the economy cabin")
    people = check_passengers(passengers, ctx.now.date())
    count = len(people)
    for flight in legs:
        check_seats(flight, cabin, count)
    if checked_bags > MAX_BAGS_PER_PASSENGER * count:
        raise WorldError(
            f"At most {MAX_BAGS_PER_PASSENGER} checked bags per passenger ({MAX_BAGS_PER_PASSENGER * count} in all)"
        )

    prices = [price_of(f, cabin, fare) for f in legs]
    free = free_bags_per_passenger(user.membership, cabin, fare) * count
    paid_bags = paid_bags_needed(checked_bags, free)
    total = sum(prices) * count + paid_bags * BAG_FEE_CENTS + (INSURANCE_CENTS * count if insurance else 0)

    chosen: list[tuple[PaymentMethod, int]] = []
    for line in payments:
        method = get_payment_method_of(session, line.payment_method_id, user.id)
        if any(m.id == method.id for m, _ in chosen):
            raise WorldError(f"Payment method {method.id} is listed more than once")
        chosen.append((method, to_cents(line.amount)))
    if sum(1 for m, _ in chosen if m.kind == "certificate") > 1:
        raise WorldError("At most one travel certificate can be used per reservation")
    paying = sum(c for _, c in chosen)
    if paying != total:
        raise WorldError(f"The payments add up to {money(paying)} but the total is {money(total)}")
    for method, cents in chosen:
        check_can_pay(method, cents, ctx.now, booking=True)

    reservation = Reservation(
        id=reservation_code(ctx.ids),
        user_id=user.id,
        origin=origin,
        destination=destination,
        trip_type=trip_type,
        cabin=cabin,
        fare=fare,
        passenger_count=count,
        checked_bags=checked_bags,
        free_bags=free,
        paid_bags=paid_bags,
        insurance=insurance,
        status="confirmed",
        created_at=iso(ctx.now),
        updated_at=iso(ctx.now),
    )
    ctx.add(reservation)
    session.flush()
    for number, (flight, price) in enumerate(zip(legs, prices, strict=True), 1):
        ctx.add(
            ReservationFlight(
                id=f"{reservation.id}-{number}",
                reservation_id=reservation.id,
                leg=number,
                flight_id=flight.id,
                price_cents=price,
            )
        )
        set_seats(flight, cabin, seats(flight, cabin) - count)
        ctx.add(flight)
    for position, (first, last, born) in enumerate(people, 1):
        ctx.add(
            Passenger(
                id=f"{reservation.id}-P{position}",
                reservation_id=reservation.id,
                position=position,
                first_name=first,
                last_name=last,
                date_of_birth=born,
            )
        )
    session.flush()
    for method, cents in chosen:
        charge(ctx, reservation, method, cents, "booking", booking=True)
    session.flush()
    return reservation_details(session, reservation, ctx.now)
