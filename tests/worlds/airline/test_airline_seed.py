"""The seeded airline data: sizes per scale, determinism, and consistency between flights,
reservations, payments and compensations."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta

import pytest

from mcpsim.engine._episode import Episode
from tests.support.seed_checks import counts, large_scale_test, other_seed_test, small_built_fast, unindexed

EPOCH = "2026-05-15T09:00:00+00:00"


def test_the_small_scale_has_the_declared_sizes_and_builds_fast(airline):
    sizes = counts(small_built_fast(airline, 7))
    assert (sizes["users"], sizes["reservations"], sizes["airports"]) == (25, 60, 8)
    assert sizes["flights"] >= 300 and sizes["passengers"] >= 60 and sizes["payments"] >= 60


@pytest.mark.slow
def test_the_default_scale_is_realistic(airline, templates):
    ep = Episode.create(airline, seed=0, scale="default", templates=templates)
    sizes = counts(ep)
    assert sizes["users"] == 500 and sizes["reservations"] == 1500 and sizes["flights"] >= 5000
    assert_consistent(ep)


def test_seeded_data_looks_real(episode):
    tables = episode.tables()
    for user in tables["users"]:
        assert re.fullmatch(r"[a-z]+_[a-z]+_\d{4}", user["id"]), user["id"]
        assert re.fullmatch(r"\(\d{3}\) \d{3}-\d{4}", user["phone"]) and "@" in user["email"]
        assert user["membership"] in ("regular", "silver", "gold", "platinum")
    for res in tables["reservations"]:
        assert re.fullmatch(r"[A-Z2-9]{6}", res["id"])
    for flight in tables["flights"]:
        assert re.fullmatch(r"MRD\d{3,4}", flight["flight_number"]) and flight["price_economy_cents"] % 100 == 0
    emails = [u["email"] for u in tables["users"]]
    assert len(set(emails)) == len(emails)


def test_seeded_flights_span_the_past_and_the_future_with_every_status(episode):
    statuses = {r["status"] for r in episode.query("SELECT DISTINCT status FROM flights")}
    assert {"landed", "cancelled", "scheduled", "departed", "delayed"} <= statuses
    assert_consistent(episode)


def test_every_column_tools_look_up_by_is_indexed(episode):
    looked_up = {
        "users": ["email", "membership"],
        "payment_methods": ["user_id", "gift_card_code", "kind"],
        "flights": ["flight_number", "date", "origin", "destination", "status"],
        "reservations": ["user_id", "status"],
        "reservation_flights": ["reservation_id", "flight_id"],
        "passengers": ["reservation_id"],
        "payments": ["reservation_id", "payment_method_id"],
        "compensations": ["reservation_id", "flight_id", "user_id"],
        "flight_changes": ["reservation_id", "old_flight_id"],
        "tickets": ["user_id", "reservation_id"],
    }
    assert unindexed(episode, looked_up) == {}


FREE = {
    "regular": {"basic": 0, "economy": 1, "premium": 2, "business": 2},
    "silver": {"basic": 1, "economy": 1, "premium": 2, "business": 3},
    "gold": {"basic": 1, "economy": 2, "premium": 3, "business": 3},
    "platinum": {"basic": 2, "economy": 2, "premium": 3, "business": 4},
}


def assert_consistent(ep: Episode) -> None:
    q = ep.query
    for f in q("SELECT * FROM flights"):
        for cabin in ("economy", "premium", "business"):
            assert 0 <= f[f"seats_{cabin}"] <= f[f"capacity_{cabin}"], f
        assert f["scheduled_departure"] < f["scheduled_arrival"]
        if f["status"] == "landed":
            assert f["actual_arrival"] and f["actual_arrival"] <= EPOCH, f
        elif f["status"] == "departed":
            assert f["actual_departure"] <= EPOCH < f["scheduled_arrival"] or f["delay_minutes"], f
        elif f["status"] in ("scheduled", "delayed"):
            assert f["actual_departure"] is None and (f["status"] == "delayed") == (f["delay_minutes"] > 0), f
    users = {u["id"]: u for u in q("SELECT * FROM users")}
    legs: dict[str, list[dict]] = {}
    for row in q(
        "SELECT l.*, f.origin, f.destination, f.scheduled_departure, f.delay_minutes FROM reservation_flights l "
        "JOIN flights f ON f.id = l.flight_id ORDER BY l.reservation_id, l.leg"
    ):
        legs.setdefault(row["reservation_id"], []).append(row)
    pax = {r["reservation_id"]: r["n"] for r in q("SELECT reservation_id, COUNT(*) AS n FROM passengers GROUP BY 1")}
    money = {
        r["reservation_id"]: r
        for r in q(
            "SELECT reservation_id, SUM(CASE kind WHEN 'charge' THEN amount_cents ELSE 0 END) AS charged, "
            "SUM(CASE kind WHEN 'refund' THEN amount_cents ELSE 0 END) AS refunded FROM payments GROUP BY 1"
        )
    }
    for res in q("SELECT * FROM reservations"):
        its = legs[res["id"]]
        assert [leg["leg"] for leg in its] == list(range(1, len(its) + 1))
        assert all(a["destination"] == b["origin"] for a, b in itertools.pairwise(its))
        # Booked before the first flight left (a delayed flight can still be sold after its scheduled time).
        first = datetime.fromisoformat(its[0]["scheduled_departure"]) + timedelta(minutes=its[0]["delay_minutes"])
        assert its[0]["origin"] == res["origin"] and datetime.fromisoformat(res["created_at"]) < first, res
        assert (its[-1]["destination"] == res["origin"]) == (res["trip_type"] == "round_trip")
        assert pax[res["id"]] == res["passenger_count"]
        tier = users[res["user_id"]]["membership"]
        assert (
            res["free_bags"] == FREE[tier]["basic" if res["fare"] == "basic" else res["cabin"]] * res["passenger_count"]
        )
        assert res["paid_bags"] == max(0, res["checked_bags"] - res["free_bags"])
        assert res["fare"] != "basic" or res["cabin"] == "economy"
        total = (
            sum(leg["price_cents"] for leg in its) * res["passenger_count"]
            + res["paid_bags"] * 5000
            + (3000 * res["passenger_count"] if res["insurance"] else 0)
        )
        paid = money[res["id"]]
        assert paid["charged"] == total, res
        if res["status"] == "cancelled":
            assert res["cancelled_at"] and res["cancel_reason"] and paid["refunded"] <= paid["charged"]
        else:
            assert paid["refunded"] == 0 and res["cancelled_at"] is None
    for method in q("SELECT * FROM payment_methods WHERE kind = 'certificate'"):
        assert method["expires_on"] and (method["status"] != "used" or method["balance_cents"] == 0)
    for comp in q(
        "SELECT c.*, f.status, f.delay_minutes, r.cabin, r.insurance, u.membership FROM compensations c "
        "JOIN flights f ON f.id = c.flight_id JOIN reservations r ON r.id = c.reservation_id "
        "JOIN users u ON u.id = c.user_id"
    ):
        assert comp["status"] == "cancelled" or comp["delay_minutes"] >= 180
        assert comp["membership"] != "regular" or comp["insurance"] or comp["cabin"] == "business"


test_the_large_scale_has_tens_of_thousands_of_rows = large_scale_test(
    "airline", "~10 s", assert_consistent, users=8000, reservations=25_000, flights=40_000
)
test_a_different_seed_builds_different_data = other_seed_test(
    "airline", disjoint={"users": "email", "reservations": "id"}
)
