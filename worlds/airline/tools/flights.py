"""Flight tools: airports, searching direct and one-stop flights, and a flight's status."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field
from sqlalchemy import or_
from sqlmodel import col, select

from mcpsim.world import ToolContext, WorldError, page

from .. import world
from ..inputs import AirportCode, FlightDate, FlightNumber
from ..rules import (
    CABINS,
    MAX_CONNECTION,
    MIN_CONNECTION,
    dollars,
    expected_arrival,
    expected_departure,
    get_flight,
    iso,
    parse_date,
    seats,
    standard_price,
)
from ..tables import Airport, Flight
from ..views import (
    AirportList,
    AirportView,
    DirectSearch,
    FlightStatus,
    Itinerary,
    OneStopSearch,
    flight_offer,
    flight_view,
)


def _airport(ctx: ToolContext, code: str) -> Airport:
    airport = ctx.session.get(Airport, code.strip().upper())
    if airport is None:
        raise WorldError(f"Meridian Air does not fly to or from an airport with code {code.upper()}")
    return airport


def _route(ctx: ToolContext, origin: str, destination: str, date: str) -> tuple[str, str]:
    o, d = _airport(ctx, origin).code, _airport(ctx, destination).code
    if o == d:
        raise WorldError("The origin and the destination are the same airport")
    parse_date(date)
    return o, d


@world.tool(read_only=True, idempotent=True)
def list_airports(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Part of a city, airport name, state or code to filter by.", max_length=60)
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="At most this many airports (1-50).")] = 50,
) -> AirportList:
    """The airports Meridian Air serves (code, name, city, state), alphabetically by code,
    optionally filtered by a part of the city, name, state or code."""
    where = []
    if query and query.strip():
        like = f"%{query.strip()}%"
        where.append(
            or_(
                col(Airport.city).ilike(like),
                col(Airport.name).ilike(like),
                col(Airport.code).ilike(like),
                col(Airport.state).ilike(like),
            )
        )
    total, rows = page(ctx.session, Airport, where, [col(Airport.code)], limit=limit)
    return AirportList(total_count=total, airports=AirportView.from_rows(rows))


@world.tool(read_only=True, idempotent=True)
def search_direct_flights(
    ctx: ToolContext, origin: AirportCode, destination: AirportCode, date: FlightDate
) -> DirectSearch:
    """Nonstop flights from origin to destination departing on a date (UTC), by departure time,
    with status, delay, and per cabin the seats left and the fare per passenger for the basic
    (economy only), standard and flex fares. `bookable` says whether a flight can still be sold
    (not cancelled, not departed, more than one hour before departure)."""
    o, d = _route(ctx, origin, destination, date)
    flights = ctx.session.exec(
        select(Flight)
        .where(Flight.origin == o, Flight.destination == d, Flight.date == date)
        .order_by(col(Flight.scheduled_departure))
    ).all()
    return DirectSearch(
        origin=o, destination=d, date=date, as_of=iso(ctx.now), flights=[flight_offer(f, ctx.now) for f in flights]
    )


@world.tool(read_only=True, idempotent=True)
def search_onestop_flights(
    ctx: ToolContext,
    origin: AirportCode,
    destination: AirportCode,
    date: Annotated[FlightDate, Field(description="The departure date of the first flight, YYYY-MM-DD (UTC).")],
    limit: Annotated[int, Field(ge=1, le=20, description="At most this many itineraries (1-20).")] = 10,
) -> OneStopSearch:
    """Itineraries with one connection from origin to destination whose first flight departs on
    the date (UTC): the second flight leaves the connecting airport 1 to 8 hours after the first
    one arrives (it may be the next day). Cancelled flights are left out. Sorted by departure,
    then by connection time. `total_standard` is the standard fare per passenger over both
    flights for each cabin that has seats on both."""
    o, d = _route(ctx, origin, destination, date)
    firsts = ctx.session.exec(
        select(Flight)
        .where(Flight.origin == o, Flight.date == date, Flight.destination != d, Flight.status != "cancelled")
        .order_by(col(Flight.scheduled_departure))
    ).all()
    nxt = (parse_date(date) + timedelta(days=1)).isoformat()
    itineraries: list[tuple[str, int, Itinerary]] = []
    for first in firsts:
        arrival = expected_arrival(first)
        assert arrival is not None
        seconds = ctx.session.exec(
            select(Flight).where(
                Flight.origin == first.destination,
                Flight.destination == d,
                col(Flight.date).in_([date, nxt]),
                Flight.status != "cancelled",
            )
        ).all()
        for second in seconds:
            departure = expected_departure(second)
            assert departure is not None
            gap = departure - arrival
            if not MIN_CONNECTION <= gap <= MAX_CONNECTION:
                continue
            totals = {
                c: dollars(standard_price(first, c) + standard_price(second, c))
                for c in CABINS
                if seats(first, c) > 0 and seats(second, c) > 0
            }
            minutes = int(gap.total_seconds() // 60)
            itineraries.append(
                (
                    first.scheduled_departure,
                    minutes,
                    Itinerary(
                        legs=[flight_offer(first, ctx.now), flight_offer(second, ctx.now)],
                        connection_minutes=minutes,
                        total_standard=totals,
                    ),
                )
            )
    itineraries.sort(key=lambda t: (t[0], t[1]))
    return OneStopSearch(
        origin=o, destination=d, date=date, as_of=iso(ctx.now), itineraries=[i for _, _, i in itineraries[:limit]]
    )


@world.tool(read_only=True, idempotent=True)
def get_flight_status(ctx: ToolContext, flight_number: FlightNumber, date: FlightDate) -> FlightStatus:
    """The status of one flight on one date (UTC): scheduled, delayed (with the delay in minutes),
    departed, landed or cancelled, with scheduled, expected and actual times."""
    parse_date(date)
    return FlightStatus(as_of=iso(ctx.now), flight=flight_view(get_flight(ctx.session, flight_number, date)))
