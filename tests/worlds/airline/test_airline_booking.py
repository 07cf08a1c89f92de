"""Booking: itineraries, seats, fares, bags, insurance and the payment rules."""

from __future__ import annotations

from typing import Any

import pytest
from airline_support import pay, refs, shift

PAX = [{"first_name": "Ann", "last_name": "Lee", "date_of_birth": "1990-02-03"}]


def booking(
    user: dict[str, Any],
    flights: list[dict[str, Any]],
    payments: list[dict[str, Any]],
    *,
    cabin: str = "economy",
    fare: str = "standard",
    passengers: list[dict[str, Any]] = PAX,
    **extra: Any,
) -> dict[str, Any]:
    """The arguments of a book_reservation call for `user` on `flights`."""
    return {
        "user_id": user["id"],
        "flights": refs(*flights),
        "cabin": cabin,
        "fare": fare,
        "passengers": passengers,
        "payments": payments,
        **extra,
    }


def refuse(desk: Any, why: str, *args: Any, **options: Any) -> None:
    """book_reservation with the arguments `booking(*args, **options)` fails, saying `why`."""
    desk.fails("book_reservation", why, **booking(*args, **options))


def economy_trip(desk: Any) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(user, flight, the flight's economy price in cents): a user and a future flight to book."""
    user = desk.user()
    flight = desk.future_flight()
    return user, flight, flight["price_economy_cents"]


def test_a_booking_takes_seats_charges_the_total_and_records_everything(desk):
    user = desk.user("regular")
    out = desk.future_flight()
    back = desk.return_flight(out)
    before = (desk.seats(out["id"], "premium"), desk.seats(back["id"], "premium"))
    res = desk.book(user, [out, back], cabin="premium", fare="flex", passengers=2, bags=5, insurance=True)
    per_pax = out["price_premium_cents"] + back["price_premium_cents"] + 2 * 9000
    free = desk.FREE["regular"]["premium"] * 2
    total = per_pax * 2 + (5 - free) * 5000 + 2 * 3000
    assert res.trip_type == "round_trip" and (res.origin, res.destination) == (out["origin"], out["destination"])
    assert (res.free_bags, res.paid_bags, res.checked_bags, res.insurance) == (free, 5 - free, 5, True)
    assert res.total_charged == total / 100 and desk.net_paid(res.reservation_id) == total
    assert (desk.seats(out["id"], "premium"), desk.seats(back["id"], "premium")) == (before[0] - 2, before[1] - 2)
    legs = desk.rows("SELECT * FROM reservation_flights WHERE reservation_id = ? ORDER BY leg", res.reservation_id)
    assert [leg["flight_id"] for leg in legs] == [out["id"], back["id"]]
    assert [leg["price_cents"] for leg in legs] == [
        out["price_premium_cents"] + 9000,
        back["price_premium_cents"] + 9000,
    ]
    assert len(desk.rows("SELECT * FROM passengers WHERE reservation_id = ?", res.reservation_id)) == 2
    assert desk.reservation(res.reservation_id)["status"] == "confirmed"


@pytest.mark.parametrize("tier", ["regular", "silver", "gold", "platinum"])
@pytest.mark.parametrize("cabin,fare", [("economy", "basic"), ("economy", "standard"), ("business", "standard")])
def test_free_bags_depend_on_the_tier_and_the_cabin_and_extra_bags_cost_50_each(desk, tier, cabin, fare):
    user = desk.user(tier)
    flight = desk.future_flight()
    res = desk.book(user, [flight], cabin=cabin, fare=fare, passengers=2, bags=7)
    free = desk.FREE[tier]["basic" if fare == "basic" else cabin] * 2
    assert (res.free_bags, res.paid_bags) == (free, max(0, 7 - free))
    fare_cents = (
        flight[f"price_{cabin}_cents"] if fare == "standard" else int(flight["price_economy_cents"] * 0.8) // 100 * 100
    )
    assert desk.net_paid(res.reservation_id) == fare_cents * 2 + max(0, 7 - free) * 5000


def test_the_basic_fare_exists_only_in_economy(desk):
    user = desk.user()
    flight = desk.future_flight()
    payments = pay((desk.card(user["id"]), 100))
    refuse(
        desk, "basic fare exists only in the economy cabin", user, [flight], payments, cabin="business", fare="basic"
    )


def test_a_cabin_without_enough_seats_cannot_be_booked(desk):
    user = desk.user()
    flight = desk.future_flight()
    desk.arrange("UPDATE flights SET seats_business = 1 WHERE id = ?", flight["id"])
    total = flight["price_business_cents"] * 2
    two = PAX + [{"first_name": "Bo", "last_name": "Lee", "date_of_birth": "1991-02-03"}]
    payments = pay((desk.card(user["id"]), total / 100))
    refuse(desk, "has 1 seat(s) left in business; 2 needed", user, [flight], payments, cabin="business", passengers=two)


def test_departed_cancelled_and_closing_flights_cannot_be_booked(desk):
    user = desk.user()
    payments = pay((desk.card(user["id"]), 1))
    landed = desk.row("SELECT * FROM flights WHERE status = 'landed' LIMIT 1")
    refuse(desk, "has already departed", user, [landed], payments)
    cancelled = desk.row("SELECT * FROM flights WHERE status = 'cancelled' LIMIT 1")
    refuse(desk, "is cancelled and cannot be booked", user, [cancelled], payments)
    soon = desk.future_flight()
    desk.arrange("UPDATE flights SET scheduled_departure = '2026-05-15T09:40:00+00:00' WHERE id = ?", soon["id"])
    refuse(desk, "departs within the hour; sales have closed", user, [soon], payments)
    not_operated = {"flight_number": soon["flight_number"], "date": "2026-07-30"}
    refuse(desk, "does not operate on 2026-07-30", user, [not_operated], payments)


def test_flights_must_connect_with_at_least_an_hour_in_between(desk):
    user = desk.user()
    payments = pay((desk.card(user["id"]), 1))
    first = desk.future_flight()
    elsewhere = desk.row(
        "SELECT * FROM flights WHERE origin != ? AND status = 'scheduled' AND date = ? LIMIT 1",
        first["destination"],
        first["date"],
    )
    refuse(desk, "list the flights in travel order", user, [first, elsewhere], payments)
    onward = desk.row(
        "SELECT * FROM flights WHERE origin = ? AND destination != ? AND status = 'scheduled' "
        "AND scheduled_departure > ? ORDER BY scheduled_departure LIMIT 1",
        first["destination"],
        first["origin"],
        first["scheduled_arrival"],
    )
    desk.arrange(
        "UPDATE flights SET scheduled_departure = ?, scheduled_arrival = ? WHERE id = ?",
        shift(first["scheduled_arrival"], 30),
        shift(first["scheduled_arrival"], 200),
        onward["id"],
    )
    refuse(desk, "minimum connection time is 60 minutes", user, [first, onward], payments)


def test_the_payments_must_add_up_to_the_total_exactly(desk):
    user, flight, total = economy_trip(desk)
    payments = pay((desk.card(user["id"]), total / 100 - 1))
    refuse(desk, f"but the total is ${total / 100:,.2f}", user, [flight], payments)


def test_a_payment_method_must_be_the_users_and_a_card_must_not_have_expired(desk):
    user = desk.user()
    flight = desk.future_flight()
    amount = flight["price_economy_cents"] / 100
    foreign = desk.value(
        "SELECT id FROM payment_methods WHERE user_id != ? AND kind = 'credit_card' LIMIT 1", user["id"]
    )
    refuse(desk, f"does not belong to user {user['id']}", user, [flight], pay((foreign, amount)))
    desk.arrange(
        "INSERT INTO payment_methods (id, user_id, kind, brand, last4, exp_month, exp_year, status, created_at) "
        "VALUES ('credit_card_old', ?, 'credit_card', 'Visa', '1111', 3, 2026, 'active', '2024-01-01')",
        user["id"],
    )
    refuse(desk, "expired in 03/2026 and cannot be charged", user, [flight], pay(("credit_card_old", amount)))


def test_a_gift_card_pays_at_most_its_balance_and_is_debited(desk):
    user, flight, total = economy_trip(desk)
    gift = desk.give(user["id"], "gift_card", total - 100, "gift_card_test")
    refuse(desk, "less than the", user, [flight], pay((gift, total / 100)))
    res = desk.book(user, [flight], payments=pay((gift, (total - 100) / 100), (desk.card(user["id"]), 1)))
    assert desk.balance(gift) == 0 and desk.net_paid(res.reservation_id) == total


def test_a_certificate_pays_at_most_its_value_once_and_the_rest_is_forfeited(desk):
    user, flight, total = economy_trip(desk)
    card = desk.card(user["id"])
    cert = desk.give(user["id"], "certificate", 5000, "certificate_t1")
    payments = pay((cert, 60), (card, (total - 6000) / 100))
    refuse(desk, "is worth $50.00", user, [flight], payments)
    desk.book(user, [flight], payments=pay((cert, 30), (card, (total - 3000) / 100)))
    used = desk.row("SELECT * FROM payment_methods WHERE id = ?", cert)
    assert (used["status"], used["balance_cents"]) == ("used", 0)  # the other $20 is lost
    payments = pay((cert, 10), (card, (total - 1000) / 100))
    refuse(desk, "is used and cannot be used", user, [flight], payments)


def test_at_most_one_certificate_per_reservation_and_no_expired_one(desk):
    user, flight, total = economy_trip(desk)
    card = desk.card(user["id"])
    a = desk.give(user["id"], "certificate", 5000, "certificate_t1")
    b = desk.give(user["id"], "certificate", 5000, "certificate_t2")
    payments = pay((a, 50), (b, 50), (card, (total - 10000) / 100))
    refuse(desk, "At most one travel certificate", user, [flight], payments)
    old = desk.give(user["id"], "certificate", 5000, "certificate_t3", expires_on="2026-05-01")
    payments = pay((old, 50), (card, (total - 5000) / 100))
    refuse(desk, "is expired and cannot be used", user, [flight], payments)


def test_passengers_bags_and_arguments_are_bounded(desk):
    user = desk.user()
    flight = desk.future_flight()
    payments = pay((desk.card(user["id"]), 1))
    twice = PAX + PAX
    refuse(desk, "is listed twice", user, [flight], payments, passengers=twice)
    refuse(desk, "At most 4 checked bags per passenger", user, [flight], payments, checked_bags=5)
    unborn = [{"first_name": "A", "last_name": "B", "date_of_birth": "2030-01-01"}]
    refuse(desk, "not a plausible date of birth", user, [flight], payments, passengers=unborn)
    seven = [{"first_name": f"P{i}", "last_name": "X", "date_of_birth": "1990-01-01"} for i in range(7)]
    assert desk.call("book_reservation", **booking(user, [flight], payments, passengers=seven)).is_error
    assert desk.call("book_reservation", **booking(user, [flight], payments, cabin="first")).is_error
