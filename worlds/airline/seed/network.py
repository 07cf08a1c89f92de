"""The route network: airports, routes between them (every airport to each hub, the hubs among
themselves, and some more city pairs) and the daily flights of every route before and after the
epoch (landed, in the air, delayed, cancelled, scheduled)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from mcpsim.world import SeedContext

from ..rules import AIRLINE_CODE, CABINS, iso
from .airports import AIRCRAFT, AIRPORTS, HUBS

Row = dict[str, Any]


def build_airports(count: int) -> list[Row]:
    return [
        {"code": code, "name": name, "city": city, "state": state, "country": "US", "latitude": lat, "longitude": lon}
        for code, name, city, state, lat, lon in AIRPORTS[:count]
    ]


def miles(a: Row, b: Row) -> float:
    la1, lo1, la2, lo2 = map(math.radians, (a["latitude"], a["longitude"], b["latitude"], b["longitude"]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 3958.8 * 2 * math.asin(math.sqrt(h))


def build_routes(ctx: SeedContext, airports: list[Row], extra: int) -> list[Row]:
    """Every airport to and from each hub, the hubs among themselves, and `extra` more city
    pairs; one or two flight numbers per direction, each with its daily departure time (UTC)."""
    rng = ctx.rng
    pairs: list[tuple[int, int]] = []
    for i in range(len(airports)):
        for h in range(min(HUBS, len(airports))):
            if i != h and (min(i, h), max(i, h)) not in pairs:
                pairs.append((min(i, h), max(i, h)))
    others = [(i, j) for i in range(HUBS, len(airports)) for j in range(i + 1, len(airports))]
    rng.shuffle(others)
    pairs += sorted(others[:extra])
    numbers = iter(rng.sample(range(100, 3000), 4 * len(pairs) + 4))
    routes = []
    for i, j in pairs:
        a, b = airports[i], airports[j]
        distance = miles(a, b)
        size = "short" if distance < 700 else "medium" if distance < 1500 else "long"
        duration = int(round((35 + distance / 7.8) / 5) * 5)
        base = 59 + 0.11 * distance
        for origin, destination in ((a, b), (b, a)):
            for _ in range(rng.choice((1, 1, 2))):
                name, econ, prem, bus = rng.choice(AIRCRAFT[size])
                routes.append(
                    {
                        "number": f"{AIRLINE_CODE}{next(numbers)}",
                        "origin": origin["code"],
                        "destination": destination["code"],
                        # 10:00-03:00 UTC (daytime in the US), or a red-eye at 04:00-07:30 UTC
                        "departure_minute": (
                            rng.randrange(4 * 60, 7 * 60 + 35, 5)
                            if rng.random() < 0.12
                            else rng.randrange(10 * 60, 27 * 60, 5) % (24 * 60)
                        ),
                        "duration": duration,
                        "aircraft": name,
                        "capacity": {"economy": econ, "premium": prem, "business": bus},
                        "base": base,
                    }
                )
    return routes


def build_flights(ctx: SeedContext, routes: list[Row], past_days: int, future_days: int) -> list[Row]:
    rng, now = ctx.rng, ctx.now
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    flights: list[Row] = []
    for day in range(-past_days, future_days + 1):
        date = today + timedelta(days=day)
        for route in routes:
            departure = date + timedelta(minutes=route["departure_minute"])
            arrival = departure + timedelta(minutes=route["duration"])
            roll = rng.random()
            cancelled = roll < 0.035
            delay = 0
            if not cancelled and departure < now + timedelta(hours=24):  # delays are known up to a day ahead
                d = rng.random()
                delay = (
                    0
                    if d < 0.68
                    else rng.randrange(5, 61, 5)
                    if d < 0.88
                    else rng.randrange(65, 180, 5)
                    if d < 0.95
                    else rng.randrange(180, 420, 5)
                )
            dep, arr = departure + timedelta(minutes=delay), arrival + timedelta(minutes=delay)
            if cancelled:
                status = "cancelled"
            elif arr <= now:
                status = "landed"
            elif dep <= now:
                status = "departed"
            else:
                status = "delayed" if delay else "scheduled"
            capacity = route["capacity"]
            price = int(route["base"] * rng.uniform(0.85, 1.4))
            row: Row = {
                "id": f"{route['number']}-{date.date().isoformat()}",
                "flight_number": route["number"],
                "date": date.date().isoformat(),
                "origin": route["origin"],
                "destination": route["destination"],
                "scheduled_departure": iso(departure),
                "scheduled_arrival": iso(arrival),
                "aircraft": route["aircraft"],
                "status": status,
                "delay_minutes": delay,
                "actual_departure": iso(dep) if status in ("departed", "landed") else None,
                "actual_arrival": iso(arr) if status == "landed" else None,
                "price_economy_cents": price * 100,
                "price_premium_cents": int(price * 1.7) * 100,
                "price_business_cents": int(price * 3.1) * 100,
            }
            for cabin in CABINS:
                row[f"capacity_{cabin}"] = capacity[cabin]
                full = rng.random() < 0.07
                row[f"seats_{cabin}"] = (
                    0 if full else rng.randint(max(1, capacity[cabin] // 12), capacity[cabin] // 2 + 2)
                )
            flights.append(row)
    return flights
