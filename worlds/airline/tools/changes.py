"""Changing a confirmed reservation: flights, cabin, passengers, checked bags, insurance."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlmodel import Session

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import CabinArg, FlightRef, PassengerIn, PaymentMethodId, ReservationId
from ..itinerary import check_connections, check_seats, check_sellable, resolve, shape
from ..ledger import change_method, charge, refund
from ..rules import (
    BAG_FEE_CENTS,
    INSURANCE_CENTS,
    INSURANCE_WINDOW,
    MAX_BAGS_PER_PASSENGER,
    MAX_LEGS,
    MAX_PASSENGERS,
    change_fee_per_passenger,
    dollars,
    free_bags_per_passenger,
    get_reservation,
    get_user,
    has_departed,
    iso,
    legs_of,
    paid_bags_needed,
    parse,
    passengers_of,
    price_of,
    seats,
    set_seats,
)
from ..tables import Flight, FlightChange, PaymentMethod, Reservation, ReservationFlight
from ..views import ChangeResult, ReservationDetails, reservation_details
from .booking import check_passengers

OptionalMethod = Annotated[
    PaymentMethodId | None,
    Field(
        description="The user's credit card or gift card that pays the difference, or that receives it if "
        "the change costs less. Required whenever money moves."
    ),
]


def confirmed(session: Session, reservation_id: str) -> Reservation:
    reservation = get_reservation(session, reservation_id)
    if reservation.status != "confirmed":
        raise WorldError(f"Reservation {reservation.id} is cancelled and cannot be changed")
    return reservation


def refuse_if_departed(ctx: ToolContext, reservation: Reservation, what: str) -> None:
    for _, flight in legs_of(ctx.session, reservation.id):
        if has_departed(flight, ctx.now):
            raise WorldError(
                f"Flight {flight.flight_number} on {flight.date} of reservation {reservation.id} has already "
                f"departed; {what}"
            )


def _change(
    ctx: ToolContext, reservation: Reservation, refs: list[FlightRef] | None, cabin: str, payment_method_id: str | None
) -> ChangeResult:
    """Move the reservation to `refs` (None: the same flights) in `cabin`, settling the fare
    difference, the change fee and any bags no longer free."""
    session = ctx.session
    if reservation.fare == "basic":
        raise WorldError(f"Reservation {reservation.id} has a basic fare: its flights and cabin cannot be changed")
    user = get_user(session, reservation.user_id)
    old = legs_of(session, reservation.id)
    new_flights = [f for _, f in old] if refs is None else resolve(session, refs)
    old_ids = [f.id for _, f in old]
    new_ids = [f.id for f in new_flights]
    cabin_changed = cabin != reservation.cabin
    if new_ids == old_ids and not cabin_changed:
        raise WorldError("The new flights and cabin are the same as the current ones; nothing to change")

    departed = {f.id for _, f in old if has_departed(f, ctx.now)}
    if departed and cabin_changed:
        raise WorldError(
            "A flight of this reservation has already departed; the cabin of a trip in progress cannot be changed"
        )
    for i, (_, flight) in enumerate(old):
        if flight.id in departed and (i >= len(new_ids) or new_ids[i] != flight.id):
            raise WorldError(
                f"Flight {flight.flight_number} on {flight.date} has already departed and must stay in the "
                "reservation in the same place"
            )
    for flight in new_flights:
        if flight.id in old_ids:
            if flight.status == "cancelled":
                raise WorldError(f"Flight {flight.flight_number} on {flight.date} is cancelled; choose another flight")
        else:
            check_sellable(flight, ctx.now)
    check_connections(new_flights)
    route = shape(new_flights)
    if route != (reservation.origin, reservation.destination, reservation.trip_type):
        kind = "round trip" if reservation.trip_type == "round_trip" else "one-way trip"
        raise WorldError(
            f"A change must keep the trip: a {kind} from {reservation.origin} to {reservation.destination}; "
            "the new flights make a different trip"
        )
    count = reservation.passenger_count
    kept_price = {f.id: leg.price_cents for leg, f in old}
    prices: list[int] = []
    for flight in new_flights:
        if flight.id in kept_price and not cabin_changed:
            prices.append(kept_price[flight.id])
        else:
            prices.append(price_of(flight, cabin, reservation.fare))
    difference = (sum(prices) - sum(kept_price.values())) * count
    flights_changed = set(new_ids) != set(old_ids)
    airline_cancelled = any(f.status == "cancelled" for _, f in old)  # rebooking after our cancellation: no fee
    fee = (
        change_fee_per_passenger(reservation.fare, user.membership) * count
        if flights_changed and not airline_cancelled
        else 0
    )
    free = free_bags_per_passenger(user.membership, cabin, reservation.fare) * count
    extra_bags = max(0, paid_bags_needed(reservation.checked_bags, free) - reservation.paid_bags)
    total = difference + fee + extra_bags * BAG_FEE_CENTS

    # Seats: give back what the old itinerary held, then take what the new one needs.
    moved: dict[str, Flight] = {}
    for _, flight in old:
        if (flight.id not in new_ids or cabin_changed) and flight.status != "cancelled":
            set_seats(flight, reservation.cabin, seats(flight, reservation.cabin) + count)
            moved[flight.id] = flight
    for flight in new_flights:
        if flight.id not in old_ids or cabin_changed:
            check_seats(flight, cabin, count)
            set_seats(flight, cabin, seats(flight, cabin) - count)
            moved[flight.id] = flight
    method = change_method(session, reservation, payment_method_id, total, ctx.now)
    for flight in moved.values():
        ctx.add(flight)

    rows = {leg.leg: leg for leg, _ in old}
    for leg, flight in old:  # the audit trail: which flight each changed leg left
        replacement = new_ids[leg.leg - 1] if leg.leg <= len(new_ids) else None
        if replacement != flight.id:
            ctx.add(
                FlightChange(
                    id=ctx.new_id("flight_change"),
                    reservation_id=reservation.id,
                    leg=leg.leg,
                    old_flight_id=flight.id,
                    new_flight_id=replacement,
                    created_at=iso(ctx.now),
                )
            )
    for number, (flight, price) in enumerate(zip(new_flights, prices, strict=True), 1):
        row = rows.pop(number, None)
        if row is None:
            row = ReservationFlight(
                id=f"{reservation.id}-{number}",
                reservation_id=reservation.id,
                leg=number,
                flight_id=flight.id,
                price_cents=price,
            )
        else:
            row.flight_id, row.price_cents = flight.id, price
        ctx.add(row)
    for row in rows.values():
        session.delete(row)
    reservation.cabin = cabin
    reservation.free_bags = free
    reservation.paid_bags += extra_bags
    reservation.updated_at = iso(ctx.now)
    ctx.add(reservation)
    session.flush()
    purpose = "flight change" if flights_changed else "cabin change"
    if method is not None and total > 0:
        charge(ctx, reservation, method, total, purpose)
    elif method is not None and total < 0:
        refund(ctx, reservation, method, -total, purpose)
    session.flush()
    return ChangeResult(
        reservation_id=reservation.id,
        charged=dollars(max(total, 0)),
        refunded=dollars(max(-total, 0)),
        change_fee=dollars(fee),
        payment_method_id=method.id if method else None,
        reservation=reservation_details(session, reservation, ctx.now),
    )


def _paid_change(ctx: ToolContext, reservation: Reservation, method: PaymentMethod | None, cost: int) -> ChangeResult:
    """The result of a change that only costs money (bags, insurance), after the charge."""
    ctx.session.flush()
    return ChangeResult(
        reservation_id=reservation.id,
        charged=dollars(cost),
        refunded=0.0,
        change_fee=0.0,
        payment_method_id=method.id if method else None,
        reservation=reservation_details(ctx.session, reservation, ctx.now),
    )


@world.tool(irreversible=True)
def update_reservation_flights(
    ctx: ToolContext,
    reservation_id: ReservationId,
    flights: Annotated[
        list[FlightRef],
        Field(
            min_length=1,
            max_length=MAX_LEGS,
            description="The whole new itinerary in travel order, including the flights that stay the same.",
        ),
    ],
    cabin: Annotated[
        CabinArg | None, Field(description="A new cabin for the whole trip; the current one if omitted.")
    ] = None,
    payment_method_id: OptionalMethod = None,
) -> ChangeResult:
    """Change the flights of a confirmed reservation (and optionally its cabin, which applies to
    every flight). Basic fares cannot be changed. The trip must stay the same: same origin, same
    destination, same trip type. Flights already departed must stay as they are; new flights must
    be bookable with seats for every passenger. New flights are priced at today's fare for the
    reservation's cabin and fare; flights kept in the same cabin keep the price paid. The user pays
    (or gets back) the difference times the passengers, plus a $75 change fee per passenger on a
    standard fare for regular and silver members (gold, platinum and flex fares pay none, nor
    anyone whose reservation has a flight the airline cancelled), plus
    $50 for each checked bag that a cabin change makes no longer free. Charges go to a credit card
    or gift card of the user; refunds to a card that paid for the reservation or a gift card."""
    reservation = confirmed(ctx.session, reservation_id)
    return _change(ctx, reservation, flights, cabin or reservation.cabin, payment_method_id)


@world.tool(irreversible=True)
def update_reservation_cabin(
    ctx: ToolContext,
    reservation_id: ReservationId,
    cabin: CabinArg,
    payment_method_id: OptionalMethod = None,
) -> ChangeResult:
    """Move every flight of a confirmed reservation to another cabin (economy, premium, business),
    keeping the flights. Not for basic fares, nor once a flight of the trip has departed; every
    flight needs seats in the new cabin for every passenger. The user pays (or gets back) today's
    fare in the new cabin minus the fare paid, per flight and passenger, plus $50 for each checked
    bag the new cabin no longer carries free. No change fee. Charges go to a credit card or gift
    card of the user; refunds to a card that paid for the reservation or a gift card."""
    reservation = confirmed(ctx.session, reservation_id)
    if cabin == reservation.cabin:
        raise WorldError(f"Reservation {reservation.id} is already in {cabin}")
    return _change(ctx, reservation, None, cabin, payment_method_id)


@world.tool(idempotent=True)
def update_reservation_passengers(
    ctx: ToolContext,
    reservation_id: ReservationId,
    passengers: Annotated[
        list[PassengerIn],
        Field(
            min_length=1,
            max_length=MAX_PASSENGERS,
            description="Every passenger, in the reservation's order, with the corrected details.",
        ),
    ],
) -> ReservationDetails:
    """Change the names or dates of birth of the passengers of a confirmed reservation before its
    first flight departs. The number of passengers cannot change: list exactly as many as the
    reservation has, in the same order."""
    session = ctx.session
    reservation = confirmed(session, reservation_id)
    if len(passengers) != reservation.passenger_count:
        raise WorldError(
            f"Reservation {reservation.id} has {reservation.passenger_count} passenger(s); the number of passengers "
            "cannot change (give the details of exactly that many)"
        )
    refuse_if_departed(ctx, reservation, "its passengers can no longer be changed")
    people = check_passengers(passengers, ctx.now.date())
    rows = passengers_of(session, reservation.id)
    changed = False
    for row, (first, last, born) in zip(rows, people, strict=True):
        if (row.first_name, row.last_name, row.date_of_birth) != (first, last, born):
            row.first_name, row.last_name, row.date_of_birth = first, last, born
            ctx.add(row)
            changed = True
    if changed:
        reservation.updated_at = iso(ctx.now)
        ctx.add(reservation)
    session.flush()
    return reservation_details(session, reservation, ctx.now)


@world.tool(irreversible=True)
def update_reservation_baggages(
    ctx: ToolContext,
    reservation_id: ReservationId,
    checked_bags: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_BAGS_PER_PASSENGER * MAX_PASSENGERS,
            description="The new total of checked bags for all passengers together.",
        ),
    ],
    payment_method_id: OptionalMethod = None,
) -> ChangeResult:
    """Add checked bags to a confirmed reservation before its first flight departs. Bags cannot be
    removed (the new total must be at least the current one), and each passenger may check at
    most 4. Bags within the reservation's free allowance cost nothing; every other bag costs $50,
    paid by a credit card or gift card of the user."""
    session = ctx.session
    reservation = confirmed(session, reservation_id)
    refuse_if_departed(ctx, reservation, "bags can no longer be added")
    if checked_bags < reservation.checked_bags:
        raise WorldError(
            f"Reservation {reservation.id} has {reservation.checked_bags} checked bag(s); bags cannot be removed"
        )
    if checked_bags == reservation.checked_bags:
        raise WorldError(f"Reservation {reservation.id} already has {checked_bags} checked bag(s); nothing to change")
    limit = MAX_BAGS_PER_PASSENGER * reservation.passenger_count
    if checked_bags > limit:
        raise WorldError(f"At most {MAX_BAGS_PER_PASSENGER} checked bags per passenger ({limit} for this reservation)")
    extra = max(0, paid_bags_needed(checked_bags, reservation.free_bags) - reservation.paid_bags)
    cost = extra * BAG_FEE_CENTS
    method = change_method(session, reservation, payment_method_id, cost, ctx.now)
    reservation.checked_bags = checked_bags
    reservation.paid_bags += extra
    reservation.updated_at = iso(ctx.now)
    ctx.add(reservation)
    if method is not None:
        charge(ctx, reservation, method, cost, "baggage")
    return _paid_change(ctx, reservation, method, cost)


@world.tool(irreversible=True)
def add_travel_insurance(
    ctx: ToolContext,
    reservation_id: ReservationId,
    payment_method_id: Annotated[PaymentMethodId, Field(description="The user's credit card or gift card that pays.")],
) -> ChangeResult:
    """Add travel insurance ($30 per passenger) to a confirmed reservation. It can only be bought
    within 24 hours of booking and before the first flight departs. Insurance makes the fare
    refundable when the trip is cancelled for illness or a family emergency, and makes the
    travellers eligible for compensation certificates."""
    session = ctx.session
    reservation = confirmed(session, reservation_id)
    if reservation.insurance:
        raise WorldError(f"Reservation {reservation.id} already has travel insurance")
    if ctx.now - parse(reservation.created_at) > INSURANCE_WINDOW:
        raise WorldError(
            f"Reservation {reservation.id} was booked on {reservation.created_at[:16].replace('T', ' ')} UTC; travel "
            "insurance can only be added within 24 hours of booking"
        )
    refuse_if_departed(ctx, reservation, "insurance can no longer be added")
    cost = INSURANCE_CENTS * reservation.passenger_count
    method = change_method(session, reservation, payment_method_id, cost, ctx.now)
    assert method is not None
    reservation.insurance = True
    reservation.updated_at = iso(ctx.now)
    ctx.add(reservation)
    charge(ctx, reservation, method, cost, "insurance")
    return _paid_change(ctx, reservation, method, cost)
