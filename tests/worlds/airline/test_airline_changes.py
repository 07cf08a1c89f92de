"""Changing a reservation: flights, cabin, passengers, bags and insurance."""

from __future__ import annotations

from typing import Any

import pytest
from airline_support import depart, refs


def new_flights(res: Any, flights: list[dict[str, Any]], method: str) -> dict[str, Any]:
    """The arguments of update_reservation_flights moving `res` onto `flights`."""
    return {"reservation_id": res.reservation_id, "flights": refs(*flights), "payment_method_id": method}


def new_cabin(res: Any, cabin: str, method: str) -> dict[str, Any]:
    """The arguments of update_reservation_cabin moving `res` into `cabin`."""
    return {"reservation_id": res.reservation_id, "cabin": cabin, "payment_method_id": method}


# -- flights -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tier,fee", [("regular", 7500), ("silver", 7500), ("gold", 0), ("platinum", 0)])
def test_a_flight_change_settles_the_fare_difference_and_a_standard_fare_pays_the_change_fee_by_tier(desk, tier, fee):
    user = desk.user(tier)
    old = desk.future_flight()
    new = desk.alternative(old)
    res = desk.book(user, [old], passengers=2)
    card = desk.card(user["id"])
    old_seats, new_seats = desk.seats(old["id"], "economy"), desk.seats(new["id"], "economy")
    result = desk.ok("update_reservation_flights", **new_flights(res, [new], card))
    total = (new["price_economy_cents"] - old["price_economy_cents"]) * 2 + fee * 2
    assert result.change_fee == fee * 2 / 100
    assert (result.charged, result.refunded) == (max(total, 0) / 100, max(-total, 0) / 100)
    assert desk.net_paid(res.reservation_id) == old["price_economy_cents"] * 2 + total
    assert desk.seats(old["id"], "economy") == old_seats + 2 and desk.seats(new["id"], "economy") == new_seats - 2
    leg = desk.row("SELECT * FROM reservation_flights WHERE id = ?", f"{res.reservation_id}-1")
    assert (leg["flight_id"], leg["price_cents"]) == (new["id"], new["price_economy_cents"])


def test_a_flex_fare_changes_without_a_fee(desk):
    user = desk.user("regular")
    old = desk.future_flight()
    new = desk.alternative(old)
    res = desk.book(user, [old], fare="flex")
    result = desk.ok("update_reservation_flights", **new_flights(res, [new], desk.card(user["id"])))
    assert result.change_fee == 0
    assert desk.net_paid(res.reservation_id) == new["price_economy_cents"] + 6000


def test_a_basic_fare_cannot_be_changed(desk):
    user = desk.user("platinum")
    old = desk.future_flight()
    new = desk.alternative(old)
    res = desk.book(user, [old], fare="basic")
    desk.fails(
        "update_reservation_flights",
        "basic fare: its flights and cabin cannot be changed",
        **new_flights(res, [new], desk.card(user["id"])),
    )
    desk.fails("update_reservation_cabin", "basic fare", **new_cabin(res, "business", desk.card(user["id"])))


def test_a_change_must_keep_the_trip(desk):
    user = desk.user()
    old = desk.future_flight()
    res = desk.book(user, [old])
    other = desk.row(
        "SELECT * FROM flights WHERE status = 'scheduled' AND date > ? AND destination != ? "
        "AND seats_economy > 4 LIMIT 1",
        old["date"],
        old["destination"],
    )
    desk.fails(
        "update_reservation_flights", "A change must keep the trip", **new_flights(res, [other], desk.card(user["id"]))
    )
    desk.fails("update_reservation_flights", "nothing to change", **new_flights(res, [old], desk.card(user["id"])))


def test_a_flown_flight_must_stay_and_only_the_rest_of_the_trip_can_change(desk):
    user = desk.user("gold")
    out = desk.future_flight()
    back = desk.return_flight(out)
    later = desk.alternative(back)
    res = desk.book(user, [out, back])
    depart(desk, out["id"])
    other_out = desk.alternative(out)
    desk.fails(
        "update_reservation_flights",
        "has already departed and must stay",
        **new_flights(res, [other_out, back], desk.card(user["id"])),
    )
    desk.fails(
        "update_reservation_cabin",
        "cabin of a trip in progress cannot be changed",
        **new_cabin(res, "business", desk.card(user["id"])),
    )
    out_now = desk.row("SELECT * FROM flights WHERE id = ?", out["id"])
    desk.ok("update_reservation_flights", **new_flights(res, [out_now, later], desk.card(user["id"])))
    assert (
        desk.value("SELECT flight_id FROM reservation_flights WHERE id = ?", f"{res.reservation_id}-2") == later["id"]
    )


def test_new_flights_need_seats_and_money_needs_a_method(desk):
    user = desk.user()
    old = desk.future_flight()
    new = desk.alternative(old)
    res = desk.book(user, [old], passengers=2)
    desk.arrange("UPDATE flights SET seats_economy = 1 WHERE id = ?", new["id"])
    desk.fails(
        "update_reservation_flights",
        "has 1 seat(s) left in economy; 2 needed",
        **new_flights(res, [new], desk.card(user["id"])),
    )
    desk.arrange("UPDATE flights SET seats_economy = 50 WHERE id = ?", new["id"])
    desk.fails(
        "update_reservation_flights", "give the payment method", reservation_id=res.reservation_id, flights=refs(new)
    )


def test_changes_cannot_be_paid_by_certificate_and_refunds_go_to_a_card_that_paid_or_a_gift_card(desk):
    user = desk.user("gold")
    old = desk.future_flight()
    new = desk.alternative(old)
    desk.arrange(
        "UPDATE flights SET price_economy_cents = ? WHERE id = ?", old["price_economy_cents"] + 10000, new["id"]
    )
    res = desk.book(user, [old])
    cert = desk.give(user["id"], "certificate", 50000, "certificate_t1")
    desk.fails("update_reservation_flights", "can only pay for a new booking", **new_flights(res, [new], cert))
    desk.ok("update_reservation_flights", **new_flights(res, [new], desk.card(user["id"])))
    # Moving back is $100 cheaper: refunded, but not to a card that never paid for this reservation.
    desk.arrange(
        "INSERT INTO payment_methods (id, user_id, kind, brand, last4, exp_month, exp_year, status, created_at) "
        "VALUES ('credit_card_new', ?, 'credit_card', 'Visa', '2222', 3, 2030, 'active', '2024-01-01')",
        user["id"],
    )
    desk.fails("update_reservation_flights", "did not pay for it", **new_flights(res, [old], "credit_card_new"))
    gift = desk.give(user["id"], "gift_card", 0, "gift_card_t1")
    result = desk.ok("update_reservation_flights", **new_flights(res, [old], gift))
    assert result.refunded == 100.0 and desk.balance(gift) == 10000


# -- cabin -------------------------------------------------------------------------------------


def test_a_cabin_change_moves_seats_and_charges_todays_fare_difference_without_a_fee(desk):
    user = desk.user("regular")
    out = desk.future_flight()
    back = desk.return_flight(out)
    res = desk.book(user, [out, back], passengers=2)
    eco = (desk.seats(out["id"], "economy"), desk.seats(back["id"], "economy"))
    bus = (desk.seats(out["id"], "business"), desk.seats(back["id"], "business"))
    result = desk.ok("update_reservation_cabin", **new_cabin(res, "business", desk.card(user["id"])))
    diff = (
        out["price_business_cents"]
        - out["price_economy_cents"]
        + back["price_business_cents"]
        - back["price_economy_cents"]
    ) * 2
    assert result.charged == diff / 100 and result.change_fee == 0
    assert (desk.seats(out["id"], "economy"), desk.seats(back["id"], "economy")) == (eco[0] + 2, eco[1] + 2)
    assert (desk.seats(out["id"], "business"), desk.seats(back["id"], "business")) == (bus[0] - 2, bus[1] - 2)
    r = desk.reservation(res.reservation_id)
    assert (r["cabin"], r["free_bags"]) == ("business", 4)
    desk.fails(
        "update_reservation_cabin", "is already in business", **new_cabin(res, "business", desk.card(user["id"]))
    )


def test_a_downgrade_refunds_the_difference_but_charges_bags_no_longer_free(desk):
    user = desk.user("regular")
    flight = desk.future_flight()
    res = desk.book(user, [flight], cabin="business", bags=2)  # 2 free in business, 1 in economy
    result = desk.ok("update_reservation_cabin", **new_cabin(res, "economy", desk.card(user["id"])))
    expected = flight["price_business_cents"] - flight["price_economy_cents"] - 5000
    assert result.refunded == expected / 100
    assert (desk.reservation(res.reservation_id)["paid_bags"], desk.reservation(res.reservation_id)["free_bags"]) == (
        1,
        1,
    )


def test_a_cabin_without_seats_cannot_be_chosen(desk):
    user = desk.user()
    flight = desk.future_flight()
    res = desk.book(user, [flight])
    desk.arrange("UPDATE flights SET seats_premium = 0 WHERE id = ?", flight["id"])
    desk.fails(
        "update_reservation_cabin", "has 0 seat(s) left in premium", **new_cabin(res, "premium", desk.card(user["id"]))
    )


# -- passengers --------------------------------------------------------------------------------


def test_passenger_details_can_be_corrected_but_their_number_never_changes(desk):
    user = desk.user()
    flight = desk.future_flight()
    res = desk.book(user, [flight], passengers=2, fare="basic")
    fixed = [
        {"first_name": "Anna", "last_name": "Smith", "date_of_birth": "1980-01-01"},
        {"first_name": "Pax1", "last_name": user["last_name"], "date_of_birth": "1981-01-02"},
    ]
    desk.fails(
        "update_reservation_passengers",
        "the number of passengers cannot change",
        reservation_id=res.reservation_id,
        passengers=fixed[:1],
    )
    desk.fails(
        "update_reservation_passengers",
        "the number of passengers cannot change",
        reservation_id=res.reservation_id,
        passengers=fixed + [{"first_name": "C", "last_name": "D", "date_of_birth": "1990-01-01"}],
    )
    desk.ok("update_reservation_passengers", reservation_id=res.reservation_id, passengers=fixed)
    first = desk.row("SELECT * FROM passengers WHERE id = ?", f"{res.reservation_id}-P1")
    assert (first["first_name"], first["last_name"]) == ("Anna", "Smith")
    depart(desk, flight["id"])
    desk.fails(
        "update_reservation_passengers",
        "has already departed",
        reservation_id=res.reservation_id,
        passengers=fixed[::-1],
    )


# -- bags --------------------------------------------------------------------------------------


def test_bags_can_only_be_added_and_extra_ones_cost_50_each(desk):
    user = desk.user("silver")  # 1 free bag per passenger in economy
    flight = desk.future_flight()
    res = desk.book(user, [flight], passengers=2, bags=1)
    card = desk.card(user["id"])
    desk.fails(
        "update_reservation_baggages",
        "bags cannot be removed",
        reservation_id=res.reservation_id,
        checked_bags=0,
        payment_method_id=card,
    )
    desk.fails(
        "update_reservation_baggages",
        "nothing to change",
        reservation_id=res.reservation_id,
        checked_bags=1,
        payment_method_id=card,
    )
    desk.fails(
        "update_reservation_baggages",
        "At most 4 checked bags per passenger",
        reservation_id=res.reservation_id,
        checked_bags=9,
        payment_method_id=card,
    )
    free_one = desk.ok("update_reservation_baggages", reservation_id=res.reservation_id, checked_bags=2)
    assert free_one.charged == 0
    desk.fails(
        "update_reservation_baggages", "give the payment method", reservation_id=res.reservation_id, checked_bags=4
    )
    paid = desk.ok(
        "update_reservation_baggages", reservation_id=res.reservation_id, checked_bags=4, payment_method_id=card
    )
    r = desk.reservation(res.reservation_id)
    assert paid.charged == 100.0 and (r["checked_bags"], r["paid_bags"]) == (4, 2)
    assert desk.payments(res.reservation_id)[-1]["purpose"] == "baggage"


def test_bags_cannot_be_added_once_the_trip_has_begun_or_on_a_cancelled_reservation(desk):
    user = desk.user()
    flight = desk.future_flight()
    res = desk.book(user, [flight])
    depart(desk, flight["id"])
    desk.fails("update_reservation_baggages", "has already departed", reservation_id=res.reservation_id, checked_bags=1)
    cancelled = desk.value("SELECT id FROM reservations WHERE status = 'cancelled' LIMIT 1")
    desk.fails(
        "update_reservation_baggages", "is cancelled and cannot be changed", reservation_id=cancelled, checked_bags=3
    )


# -- insurance ---------------------------------------------------------------------------------


def test_insurance_can_be_added_within_24_hours_of_booking_only(desk):
    user = desk.user()
    flight = desk.future_flight()
    res = desk.book(user, [flight], passengers=3)
    card = desk.card(user["id"])
    insure = {"reservation_id": res.reservation_id, "payment_method_id": card}
    desk.age(res.reservation_id, 24.5)
    desk.fails("add_travel_insurance", "only be added within 24 hours of booking", **insure)
    desk.age(res.reservation_id, 23)
    result = desk.ok("add_travel_insurance", **insure)
    assert result.charged == 90.0 and desk.reservation(res.reservation_id)["insurance"] == 1
    desk.fails("add_travel_insurance", "already has travel insurance", **insure)


def test_insurance_is_not_paid_by_certificate(desk):
    user = desk.user()
    flight = desk.future_flight()
    res = desk.book(user, [flight])
    cert = desk.give(user["id"], "certificate", 10000, "certificate_t1")
    desk.fails(
        "add_travel_insurance",
        "can only pay for a new booking",
        reservation_id=res.reservation_id,
        payment_method_id=cert,
    )


def test_no_change_fee_when_the_airline_cancelled_a_flight_of_the_reservation(desk):
    user = desk.user("regular")
    old = desk.future_flight()
    new = desk.alternative(old)
    res = desk.book(user, [old], passengers=2)
    desk.arrange("UPDATE flights SET status = 'cancelled' WHERE id = ?", old["id"])
    result = desk.ok("update_reservation_flights", **new_flights(res, [new], desk.card(user["id"])))
    assert result.change_fee == 0
    assert desk.net_paid(res.reservation_id) == new["price_economy_cents"] * 2
