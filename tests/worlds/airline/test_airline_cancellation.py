"""Cancellation refunds: the 24-hour rule, airline cancellations, fare, insurance, time to
departure and membership; where the money goes; what cannot be cancelled."""

from __future__ import annotations

import pytest


def booked(
    desk,
    *,
    tier="regular",
    fare="standard",
    cabin="economy",
    passengers=1,
    bags=0,
    insurance=False,
    hours_ago=72.0,
    payments=None,
    flights=None,
):
    """A reservation booked through the tool, then aged so the 24-hour rule no longer applies."""
    user = desk.user(tier)
    flights = flights or [desk.future_flight()]
    res = desk.book(
        user, flights, cabin=cabin, fare=fare, passengers=passengers, bags=bags, insurance=insurance, payments=payments
    )
    desk.age(res.reservation_id, hours_ago)
    return user, flights, res


def fare_of(flight, cabin="economy", fare="standard"):
    standard = flight[f"price_{cabin}_cents"]
    return {
        "basic": int(standard * 0.8) // 100 * 100,
        "standard": standard,
        "flex": standard + {"economy": 6000, "premium": 9000, "business": 15000}[cabin],
    }[fare]


def test_within_24_hours_of_booking_everything_is_refunded_whatever_the_fare(desk):
    _user, (flight,), res = booked(desk, fare="basic", insurance=True, bags=2, hours_ago=23)
    paid = desk.net_paid(res.reservation_id)
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason="change of plans")
    assert quote.total_refund == paid / 100 and "24 hours" in quote.rule
    seats = desk.seats(flight["id"], "economy")
    done = desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="change of plans")
    assert done.status == "cancelled" and desk.net_paid(res.reservation_id) == 0
    assert desk.seats(flight["id"], "economy") == seats + 1
    r = desk.reservation(res.reservation_id)
    assert (r["status"], r["cancel_reason"]) == ("cancelled", "change of plans") and r["cancelled_at"]


def test_after_24_hours_a_basic_fare_refunds_only_paid_bags(desk):
    _user, _flights, res = booked(desk, fare="basic", bags=2, insurance=True, hours_ago=24.2)
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason="change of plans")
    assert (quote.fare_refund, quote.baggage_refund, quote.total_refund) == (0, 100.0, 100.0)
    desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="change of plans")
    assert [p["amount_cents"] for p in desk.payments(res.reservation_id, "refund")] == [10000]


@pytest.mark.parametrize("tier,fee", [("regular", 10000), ("silver", 10000), ("gold", 5000), ("platinum", 0)])
def test_a_standard_fare_refunds_the_fare_minus_a_fee_that_depends_on_the_tier(desk, tier, fee):
    _user, (flight,), res = booked(desk, tier=tier, passengers=2)
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason="change of plans")
    assert quote.fare_refund == (fare_of(flight) * 2 - fee * 2) / 100
    desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="change of plans")
    assert desk.net_paid(res.reservation_id) == fee * 2


def test_a_standard_fare_refunds_nothing_within_24_hours_of_departure(desk):
    user = desk.user("platinum")
    flight = desk.future_flight()
    res = desk.book(user, [flight], bags=4)
    desk.age(res.reservation_id, 100)
    desk.arrange(
        "UPDATE flights SET scheduled_departure = '2026-05-16T07:00:00+00:00', "
        "scheduled_arrival = '2026-05-16T09:00:00+00:00' WHERE id = ?",
        flight["id"],
    )
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason="change of plans")
    assert (
        quote.fare_refund == 0 and quote.baggage_refund == 100.0 and "less than 24 hours before departure" in quote.rule
    )


def test_a_flex_fare_refunds_the_fare_but_not_the_insurance(desk):
    _user, (flight,), res = booked(desk, fare="flex", insurance=True, passengers=2)
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason="change of plans")
    assert quote.total_refund == fare_of(flight, fare="flex") * 2 / 100 and quote.other_refund == 0


@pytest.mark.parametrize(
    "reason,refunded", [("illness", True), ("family emergency", True), ("change of plans", False), ("other", False)]
)
def test_insurance_refunds_a_standard_fare_only_for_illness_or_a_family_emergency(desk, reason, refunded):
    _user, (flight,), res = booked(desk, tier="regular", insurance=True)
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason=reason)
    expected = fare_of(flight) if refunded else fare_of(flight) - 10000
    assert quote.fare_refund == expected / 100


def test_insurance_makes_even_a_basic_fare_refundable_for_illness(desk):
    _user, (flight,), res = booked(desk, fare="basic", insurance=True)
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason="illness")
    assert quote.fare_refund == fare_of(flight, fare="basic") / 100


def test_a_flight_cancelled_by_the_airline_refunds_everything(desk):
    _user, (flight,), res = booked(desk, fare="basic", insurance=True, bags=1)
    desk.fails(
        "quote_cancellation",
        "has been cancelled by the airline",
        reservation_id=res.reservation_id,
        reason="airline cancelled flight",
    )
    desk.fails(
        "cancel_reservation",
        "has been cancelled by the airline",
        reservation_id=res.reservation_id,
        reason="airline cancelled flight",
    )
    desk.arrange("UPDATE flights SET status = 'cancelled' WHERE id = ?", flight["id"])
    paid = desk.net_paid(res.reservation_id)
    done = desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="airline cancelled flight")
    assert done.total_refund == paid / 100 and desk.net_paid(res.reservation_id) == 0


def test_a_reservation_with_a_departed_flight_or_already_cancelled_cannot_be_cancelled(desk):
    departed = desk.row(
        "SELECT r.id FROM reservations r JOIN reservation_flights l ON l.reservation_id = r.id "
        "JOIN flights f ON f.id = l.flight_id "
        "WHERE r.status = 'confirmed' AND f.status IN ('landed', 'departed') LIMIT 1"
    )
    desk.fails(
        "cancel_reservation",
        "a reservation with a departed flight cannot be cancelled",
        reservation_id=departed["id"],
        reason="change of plans",
    )
    desk.fails("quote_cancellation", "departed", reservation_id=departed["id"], reason="illness")
    cancelled = desk.value("SELECT id FROM reservations WHERE status = 'cancelled' LIMIT 1")
    desk.fails("cancel_reservation", "is already cancelled", reservation_id=cancelled, reason="change of plans")


def test_a_delayed_flight_that_has_not_left_yet_does_not_block_a_cancellation(desk):
    _user, (flight,), res = booked(desk, fare="flex")
    # Scheduled half an hour ago, delayed by two hours: it leaves in 90 minutes.
    desk.arrange(
        "UPDATE flights SET status = 'delayed', delay_minutes = 120, "
        "scheduled_departure = '2026-05-15T08:30:00+00:00', scheduled_arrival = '2026-05-15T10:30:00+00:00' "
        "WHERE id = ?",
        flight["id"],
    )
    assert desk.ok("get_reservation_details", reservation_id=res.reservation_id).trip_status == "upcoming"
    assert desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="other").status == "cancelled"


def test_a_flight_past_its_departure_time_counts_as_departed_even_if_not_marked(desk):
    _user, (flight,), res = booked(desk, fare="flex")
    desk.arrange(
        "UPDATE flights SET scheduled_departure = '2026-05-15T08:50:00+00:00', "
        "scheduled_arrival = '2026-05-15T11:00:00+00:00' WHERE id = ?",
        flight["id"],
    )
    desk.fails(
        "cancel_reservation",
        "a reservation with a departed flight cannot be cancelled",
        reservation_id=res.reservation_id,
        reason="other",
    )


def test_refunds_go_to_cards_and_gift_cards_first_and_the_certificate_share_comes_back_as_a_certificate(desk):
    user = desk.user("regular")
    flight = desk.future_flight()
    total = fare_of(flight, fare="flex")
    gift = desk.give(user["id"], "gift_card", 5000, "gift_card_t1")
    cert = desk.give(user["id"], "certificate", 8000, "certificate_t1")
    card = desk.card(user["id"])
    res = desk.book(
        user,
        [flight],
        fare="flex",
        payments=[
            {"payment_method_id": cert, "amount": 80},
            {"payment_method_id": gift, "amount": 50},
            {"payment_method_id": card, "amount": (total - 13000) / 100},
        ],
    )
    desk.age(res.reservation_id, 48)
    done = desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="change of plans")
    assert {r.payment_method_id: r.amount for r in done.refunds} == {gift: 50.0, card: (total - 13000) / 100}
    assert done.new_certificate_amount == 80.0 and done.new_certificate_id
    new = desk.row("SELECT * FROM payment_methods WHERE id = ?", done.new_certificate_id)
    assert (new["user_id"], new["balance_cents"], new["status"], new["source"]) == (
        user["id"],
        8000,
        "active",
        "refund",
    )
    assert new["expires_on"] == "2027-05-15"
    assert desk.balance(gift) == 5000 and desk.net_paid(res.reservation_id) == 0


def test_a_partial_refund_fills_cards_before_any_certificate(desk):
    user = desk.user("regular")
    flight = desk.future_flight()
    total = fare_of(flight)
    cert = desk.give(user["id"], "certificate", 5000, "certificate_t1")
    card = desk.card(user["id"])
    res = desk.book(
        user,
        [flight],
        payments=[
            {"payment_method_id": cert, "amount": 50},
            {"payment_method_id": card, "amount": (total - 5000) / 100},
        ],
    )
    desk.age(res.reservation_id, 48)
    done = desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="change of plans")
    refund = total - 10000  # the $100 fee of a regular member
    card_part = min(refund, total - 5000)
    assert [(r.payment_method_id, r.amount) for r in done.refunds] == [(card, card_part / 100)]
    assert done.new_certificate_amount == (refund - card_part) / 100


def test_quote_and_cancel_agree_and_the_quote_changes_nothing(desk):
    _user, _flights, res = booked(desk, tier="gold", passengers=3, bags=4)
    before = desk.ep.state_hash()
    quote = desk.ok("quote_cancellation", reservation_id=res.reservation_id, reason="family emergency")
    assert desk.ep.state_hash() == before
    done = desk.ok("cancel_reservation", reservation_id=res.reservation_id, reason="family emergency")
    assert done.total_refund == quote.total_refund and done.refunds == quote.refunds
