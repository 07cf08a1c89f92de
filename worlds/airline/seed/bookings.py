"""A history of reservations over the seeded flights whose legs, passengers, payments, refunds and
compensations agree with the rules the tools enforce."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

from mcpsim.world import SeedContext

from ..rules import (
    BAG_FEE_CENTS,
    CABINS,
    CANCEL_FEE_CENTS,
    COMPENSATION_CENTS,
    COMPENSATION_MIN_DELAY,
    INSURANCE_CENTS,
    INSURED_REASONS,
    fare_price,
    free_bags_per_passenger,
    iso,
    reservation_code,
)
from .airports import AIRPORTS, HUBS
from .members import certificate
from .network import Row


def _t(row: Row, key: str) -> datetime:
    return datetime.fromisoformat(row[key])


def _departure(f: Row) -> datetime:
    return _t(f, "scheduled_departure") + timedelta(minutes=f["delay_minutes"])


def _arrival(f: Row) -> datetime:
    return _t(f, "scheduled_arrival") + timedelta(minutes=f["delay_minutes"])


def _flown(f: Row) -> bool:
    return f["status"] in ("departed", "landed")


class Bookings:
    """A history of reservations over the seeded flights."""

    def __init__(self, ctx: SeedContext, users: list[Row], methods: list[Row], flights: list[Row]) -> None:
        self.ctx, self.rng, self.now = ctx, ctx.rng, ctx.now
        self.users = users
        self.methods = methods
        self.flights = flights
        self.by_origin_date: dict[tuple[str, str], list[Row]] = {}
        for f in flights:
            self.by_origin_date.setdefault((f["origin"], f["date"]), []).append(f)
        self.cards: dict[str, list[Row]] = {}
        self.gift_cards: dict[str, Row] = {}
        for m in methods:
            if m["kind"] == "credit_card":
                self.cards.setdefault(m["user_id"], []).append(m)
            elif m["kind"] == "gift_card":
                self.gift_cards[m["user_id"]] = m
        self.hubs = {a[0] for a in AIRPORTS[:HUBS]}
        self.reservations: list[Row] = []
        self.legs: list[Row] = []
        self.passengers: list[Row] = []
        self.payments: list[Row] = []
        self.compensations: list[Row] = []

    # -- itineraries -----------------------------------------------------------------------------

    def _next(
        self,
        origin: str,
        after: datetime,
        *,
        not_to: str | None = None,
        to: str | None = None,
        min_gap: timedelta = timedelta(minutes=60),
        max_gap: timedelta = timedelta(hours=8),
    ) -> Row | None:
        options = []
        for day in (after.date(), (after + timedelta(days=1)).date()):
            for f in self.by_origin_date.get((origin, day.isoformat()), []):
                if f["status"] == "cancelled" or f["destination"] == not_to or (to and f["destination"] != to):
                    continue
                gap = _departure(f) - after
                if min_gap <= gap <= max_gap:
                    options.append(f)
        return self.rng.choice(options) if options else None

    def _direction(self, first: Row, onestop: bool) -> list[Row] | None:
        if not onestop:
            return [first]
        if first["destination"] not in self.hubs:
            return None
        second = self._next(first["destination"], _arrival(first), not_to=first["origin"])
        return [first, second] if second else None

    def _return(self, out: list[Row], onestop: bool) -> list[Row] | None:
        origin, dest = out[0]["origin"], out[-1]["destination"]
        stay = _arrival(out[-1]) + timedelta(days=self.rng.randint(2, 9), hours=self.rng.randint(0, 12))
        if onestop and len(out) == 2:
            first = self._next(dest, stay, to=out[0]["destination"], min_gap=timedelta(0), max_gap=timedelta(hours=40))
            if first is None:
                return None
            second = self._next(first["destination"], _arrival(first), to=origin)
            return [first, second] if second else None
        back = self._next(dest, stay, to=origin, min_gap=timedelta(0), max_gap=timedelta(hours=40))
        return [back] if back else None

    def itinerary(self) -> list[Row] | None:
        rng = self.rng
        onestop = rng.random() < 0.2
        first = rng.choice(self.flights)
        # A past flight the airline cancelled was rebooked or refunded long ago; a future one is
        # still waiting for the traveller to decide.
        if first["status"] == "cancelled" and (_t(first, "scheduled_departure") < self.now or rng.random() < 0.3):
            return None
        out = self._direction(first, onestop)
        if out is None:
            return None
        if rng.random() < 0.55:
            back = self._return(out, onestop)
            if back is None:
                return None
            return out + back
        return out

    # -- one reservation -----------------------------------------------------------------------

    def build(self, count: int) -> None:
        attempts = 0
        while len(self.reservations) < count and attempts < count * 20:
            attempts += 1
            legs = self.itinerary()
            if legs is not None:
                self.book(legs)

    def book(self, legs: list[Row]) -> None:
        rng, now, ctx = self.rng, self.now, self.ctx
        user = rng.choice(self.users)
        count = rng.choices((1, 2, 3, 4, 5, 6), (50, 28, 12, 7, 2, 1))[0]
        cabin = rng.choices(CABINS, (68, 14, 18))[0]
        fare = (
            rng.choices(("basic", "standard", "flex"), (30, 50, 20))[0]
            if cabin == "economy"
            else rng.choices(("standard", "flex"), (75, 25))[0]
        )
        first_dep = _departure(legs[0]) if legs[0]["status"] != "cancelled" else _t(legs[0], "scheduled_departure")
        future = [f for f in legs if not _flown(f) and f["status"] != "cancelled"]
        if any(f[f"seats_{cabin}"] < count for f in future):
            return
        # When it was booked: usually days or weeks ahead; a few in the last day (the 24-hour rule).
        latest = min(first_dep - timedelta(hours=3), now - timedelta(minutes=20))
        roll = rng.random()
        if first_dep > now + timedelta(days=2) and roll < 0.06:
            booked = now - timedelta(minutes=rng.randint(30, 22 * 60))
        elif first_dep > now + timedelta(days=2) and roll < 0.1:
            booked = now - timedelta(minutes=rng.randint(25 * 60, 40 * 60))
        else:
            booked = latest - timedelta(minutes=rng.randint(0, 60 * 24 * rng.choice((3, 14, 45))))
        booked = booked.replace(second=0, microsecond=0)
        code = reservation_code(ctx.ids)
        checked = rng.randint(0, 2 * count) if rng.random() < 0.7 else 0
        free = free_bags_per_passenger(user["membership"], cabin, fare) * count
        paid_bags = max(0, checked - free)
        insurance = rng.random() < 0.3
        origin = legs[0]["origin"]
        end = legs[-1]["destination"]
        if end == origin:
            gaps = [
                (_departure(b) - _arrival(a), -i, a["destination"]) for i, (a, b) in enumerate(itertools.pairwise(legs))
            ]
            destination, trip_type = max(gaps)[2], "round_trip"
        else:
            destination, trip_type = end, "one_way"

        # Cancelled before travel by the user (never for trips already begun).
        cancelled = not any(_flown(f) for f in legs) and rng.random() < 0.1
        cancelled_at = None
        if cancelled:
            end_window = min(first_dep - timedelta(hours=2), now - timedelta(minutes=5))
            if end_window <= booked:
                cancelled = False
            else:
                span = int((end_window - booked).total_seconds() // 60)
                cancelled_at = booked + timedelta(minutes=rng.randint(1, max(1, span)))

        prices = []
        for number, f in enumerate(legs, 1):
            standard = int(f[f"price_{cabin}_cents"] / 100 * rng.uniform(0.85, 1.15)) * 100
            price = fare_price(standard, cabin, fare)
            prices.append(price)
            self.legs.append(
                {
                    "id": f"{code}-{number}",
                    "reservation_id": code,
                    "leg": number,
                    "flight_id": f["id"],
                    "price_cents": price,
                }
            )
            if not cancelled:
                f[f"seats_{cabin}"] = max(0, f[f"seats_{cabin}"] - count)
        fake = ctx.faker
        for position in range(1, count + 1):
            if position == 1 and rng.random() < 0.85:
                first, last, born = user["first_name"], user["last_name"], user["date_of_birth"]
            else:
                first = fake.first_name()
                last = user["last_name"] if rng.random() < 0.5 else fake.last_name()
                born = ctx.birth_date(minimum_age=2, maximum_age=80).isoformat()
            self.passengers.append(
                {
                    "id": f"{code}-P{position}",
                    "reservation_id": code,
                    "position": position,
                    "first_name": first,
                    "last_name": last,
                    "date_of_birth": born,
                }
            )
        fare_total = sum(prices) * count
        total = fare_total + paid_bags * BAG_FEE_CENTS + (INSURANCE_CENTS * count if insurance else 0)
        charges = self.pay(user, code, total, booked, allow_certificate=not cancelled)
        self.reservations.append(
            {
                "id": code,
                "user_id": user["id"],
                "origin": origin,
                "destination": destination,
                "trip_type": trip_type,
                "cabin": cabin,
                "fare": fare,
                "passenger_count": count,
                "checked_bags": checked,
                "free_bags": free,
                "paid_bags": paid_bags,
                "insurance": insurance,
                "status": "cancelled" if cancelled else "confirmed",
                "created_at": iso(booked),
                "updated_at": iso(cancelled_at or booked),
                "cancelled_at": iso(cancelled_at) if cancelled_at else None,
                "cancel_reason": None,
            }
        )
        if cancelled and cancelled_at is not None:
            self.cancel(self.reservations[-1], user, charges, fare_total, paid_bags, first_dep, booked, cancelled_at)
        else:
            self.compensate(self.reservations[-1], user, legs)

    def pay(self, user: Row, code: str, total: int, at: datetime, *, allow_certificate: bool) -> list[tuple[Row, int]]:
        rng = self.rng
        card = rng.choice(self.cards[user["id"]])
        gift = self.gift_cards.get(user["id"])
        roll = rng.random()
        if gift is not None and roll < 0.15:
            charges = [(gift, total)]
        elif allow_certificate and roll > 0.85 and total > 10000:
            value = rng.choice((50, 100, 150, 200, 250)) * 100
            used = certificate(
                self.ctx, user["id"], value, at - timedelta(days=rng.randint(10, 200)), "goodwill", status="used"
            )
            self.methods.append(used)
            part = min(value, total - 5000)
            charges = [(used, part), (card, total - part)]
        else:
            charges = [(card, total)]
        for method, cents in charges:
            self.payments.append(
                {
                    "id": self.ctx.ids.new("payment"),
                    "reservation_id": code,
                    "payment_method_id": method["id"],
                    "kind": "charge",
                    "amount_cents": cents,
                    "purpose": "booking",
                    "created_at": iso(at),
                }
            )
        return charges

    def cancel(
        self,
        res: Row,
        user: Row,
        charges: list[tuple[Row, int]],
        fare_total: int,
        paid_bags: int,
        first_dep: datetime,
        booked: datetime,
        at: datetime,
    ) -> None:
        rng = self.rng
        reason = rng.choice(("change of plans", "change of plans", "illness", "family emergency", "other"))
        res["cancel_reason"] = reason
        total = sum(c for _, c in charges)
        bags = paid_bags * BAG_FEE_CENTS
        if at - booked <= timedelta(hours=24):
            amount = total
        elif res["fare"] == "flex" or (res["insurance"] and reason in INSURED_REASONS):
            amount = fare_total + bags
        elif res["fare"] == "basic" or first_dep - at < timedelta(hours=24):
            amount = bags
        else:
            amount = max(0, fare_total - CANCEL_FEE_CENTS[user["membership"]] * res["passenger_count"]) + bags
        for method, cents in charges:
            part = min(cents, amount)
            if part <= 0:
                continue
            amount -= part
            if method["kind"] == "gift_card":
                pass  # the gift card balance seeded for the user is its current balance
            self.payments.append(
                {
                    "id": self.ctx.ids.new("payment"),
                    "reservation_id": res["id"],
                    "payment_method_id": method["id"],
                    "kind": "refund",
                    "amount_cents": part,
                    "purpose": "cancellation",
                    "created_at": iso(at),
                }
            )

    def compensate(self, res: Row, user: Row, legs: list[Row]) -> None:
        """Some disrupted trips of eligible members were already compensated."""
        eligible = user["membership"] != "regular" or res["insurance"] or res["cabin"] == "business"
        if not eligible:
            return
        for f in legs:
            disrupted = (
                "cancelled"
                if f["status"] == "cancelled"
                else "delayed"
                if f["delay_minutes"] >= COMPENSATION_MIN_DELAY
                else None
            )
            if disrupted is None or _t(f, "scheduled_departure") > self.now or self.rng.random() < 0.5:
                continue
            cents = COMPENSATION_CENTS[disrupted] * res["passenger_count"]
            issued = max(_t(f, "scheduled_departure"), datetime.fromisoformat(res["created_at"])) + timedelta(hours=6)
            issued = min(issued, self.now - timedelta(minutes=10))
            cert = certificate(self.ctx, user["id"], cents, issued, "compensation")
            self.methods.append(cert)
            self.compensations.append(
                {
                    "id": self.ctx.ids.new("compensation"),
                    "user_id": user["id"],
                    "reservation_id": res["id"],
                    "flight_id": f["id"],
                    "disruption": disrupted,
                    "amount_cents": cents,
                    "certificate_id": cert["id"],
                    "created_at": iso(issued),
                }
            )
