"""Fill a fresh airline database: airports, a route network with daily flights before and after
the epoch (landed, delayed, cancelled, in the air, scheduled), members with payment methods, and a
history of reservations whose legs, passengers, payments, refunds and compensations agree.

Rows are built as dicts and bulk-inserted. Only `ctx.rng` and `ctx.faker` are random; every time
is relative to `ctx.now` (the world's epoch, 2026-05-15 09:00 UTC). The order of the steps is the
order of the random draws: changing it changes every seeded world.
"""

from __future__ import annotations

from mcpsim.world import SeedContext

from .. import world
from ..tables import (
    Airport,
    Compensation,
    Flight,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    ReservationFlight,
    User,
)
from .bookings import Bookings
from .members import build_users, unredeemed_gift_cards
from .network import build_airports, build_flights, build_routes


@world.seeder
def seed(ctx: SeedContext) -> None:
    p = ctx.params
    airports = build_airports(p["airports"])
    routes = build_routes(ctx, airports, p["extra_routes"])
    flights = build_flights(ctx, routes, p["past_days"], p["future_days"])
    users, methods = build_users(ctx, p["users"])
    methods += unredeemed_gift_cards(ctx, p["gift_cards"])
    history = Bookings(ctx, users, methods, flights)
    history.build(p["reservations"])

    ctx.insert(Airport, airports)
    ctx.insert(Flight, flights)
    ctx.insert(User, users)
    ctx.insert(PaymentMethod, methods)
    ctx.insert(Reservation, history.reservations)
    ctx.insert(ReservationFlight, history.legs)
    ctx.insert(Passenger, history.passengers)
    ctx.insert(Payment, history.payments)
    ctx.insert(Compensation, history.compensations)
