"""Itineraries: resolving flight references, checking that flights connect and can be sold,
and working out a trip's origin, destination and type."""

from __future__ import annotations

import itertools
from datetime import datetime

from sqlmodel import Session

from mcpsim.world import WorldError

from .inputs import FlightRef
from .rules import (
    BOOKING_CUTOFF,
    MIN_CONNECTION,
    expected_arrival,
    expected_departure,
    get_flight,
    has_departed,
    parse_date,
    seats,
)
from .tables import Flight


def resolve(session: Session, refs: list[FlightRef]) -> list[Flight]:
    flights = []
    seen: set[str] = set()
    for ref in refs:
        parse_date(ref.date)
        flight = get_flight(session, ref.flight_number, ref.date)
        if flight.id in seen:
            raise WorldError(f"Flight {flight.flight_number} on {flight.date} is listed more than once")
        seen.add(flight.id)
        flights.append(flight)
    return flights


def check_sellable(flight: Flight, now: datetime) -> None:
    """A flight a passenger can be put on now."""
    label = f"Flight {flight.flight_number} on {flight.date}"
    if flight.status == "cancelled":
        raise WorldError(f"{label} is cancelled and cannot be booked")
    if has_departed(flight, now):
        raise WorldError(f"{label} has already departed")
    departure = expected_departure(flight)
    assert departure is not None
    if departure - BOOKING_CUTOFF <= now:
        raise WorldError(f"{label} departs within the hour; sales have closed")


def check_seats(flight: Flight, cabin: str, passengers: int) -> None:
    left = seats(flight, cabin)
    if left < passengers:
        raise WorldError(
            f"Flight {flight.flight_number} on {flight.date} has {left} seat(s) left in {cabin}; {passengers} needed"
        )


def check_connections(flights: list[Flight]) -> None:
    for a, b in itertools.pairwise(flights):
        if a.destination != b.origin:
            raise WorldError(
                f"Flight {a.flight_number} arrives at {a.destination} but {b.flight_number} leaves from {b.origin}; "
                "list the flights in travel order"
            )
        arrival, departure = expected_arrival(a), expected_departure(b)
        if arrival is None or departure is None:
            continue  # a cancelled flight is refused elsewhere
        if departure - arrival < MIN_CONNECTION:
            raise WorldError(
                f"Flight {b.flight_number} leaves {b.origin} less than 60 minutes after {a.flight_number} arrives; "
                "the minimum connection time is 60 minutes"
            )


def shape(flights: list[Flight]) -> tuple[str, str, str]:
    """(origin, destination, trip type). A trip that ends where it began is a round trip whose
    destination is where the longest stay between two flights happens."""
    origin, end = flights[0].origin, flights[-1].destination
    if end != origin:
        return origin, end, "one_way"
    if len(flights) < 2:
        raise WorldError("A flight cannot end where it starts")
    stays = []
    for i, (a, b) in enumerate(itertools.pairwise(flights)):
        arrival, departure = expected_arrival(a), expected_departure(b)
        gap = (departure - arrival).total_seconds() if arrival and departure else 0
        stays.append((gap, -i, a.destination))
    return origin, max(stays)[2], "round_trip"
