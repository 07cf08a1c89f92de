"""Compensation certificates: only for real disruptions, only for eligible reservations, once."""

from __future__ import annotations

from typing import Any

import pytest


def disrupted(desk, *, tier="silver", cabin="economy", insurance=False, passengers=2, status="cancelled", delay=0):
    user = desk.user(tier)
    flight = desk.future_flight()
    res = desk.book(user, [flight], cabin=cabin, passengers=passengers, insurance=insurance)
    desk.arrange("UPDATE flights SET status = ?, delay_minutes = ? WHERE id = ?", status, delay, flight["id"])
    return user, flight, res


def claim(user: dict[str, Any], flight: dict[str, Any], res: Any) -> dict[str, Any]:
    """Arguments for issue_compensation_certificate: `user` claims for `flight` on reservation `res`."""
    return {
        "user_id": user["id"],
        "reservation_id": res.reservation_id,
        "flight_number": flight["flight_number"],
        "date": flight["date"],
    }


def issue(desk: Any, user: dict[str, Any], flight: dict[str, Any], res: Any) -> Any:
    return desk.ok("issue_compensation_certificate", **claim(user, flight, res))


def refused(desk: Any, message: str, user: dict[str, Any], flight: dict[str, Any], res: Any) -> Any:
    return desk.fails("issue_compensation_certificate", message, **claim(user, flight, res))


def test_a_cancelled_flight_earns_100_per_passenger_as_a_certificate_valid_a_year(desk):
    user, flight, res = disrupted(desk, passengers=3)
    cert = issue(desk, user, flight, res)
    assert (cert.disruption, cert.amount, cert.expires_on) == ("cancelled", 300.0, "2027-05-15")
    row = desk.row("SELECT * FROM payment_methods WHERE id = ?", cert.certificate_id)
    assert (row["kind"], row["balance_cents"], row["status"], row["source"]) == (
        "certificate",
        30000,
        "active",
        "compensation",
    )
    comp = desk.row("SELECT * FROM compensations WHERE id = ?", cert.compensation_id)
    assert (comp["flight_id"], comp["amount_cents"], comp["user_id"]) == (flight["id"], 30000, user["id"])


def test_a_delay_of_three_hours_earns_50_per_passenger_and_a_shorter_one_nothing(desk):
    user, flight, res = disrupted(desk, status="delayed", delay=179)
    refused(desk, "needs a delay of at least 3 hours", user, flight, res)
    desk.arrange("UPDATE flights SET delay_minutes = 180 WHERE id = ?", flight["id"])
    assert issue(desk, user, flight, res).amount == 100.0


def test_an_on_time_flight_earns_nothing(desk):
    user, flight, res = disrupted(desk, status="scheduled")
    refused(desk, "was neither cancelled nor delayed", user, flight, res)


@pytest.mark.parametrize(
    "tier,cabin,insurance,eligible",
    [
        ("regular", "economy", False, False),
        ("regular", "premium", False, False),
        ("regular", "business", False, True),
        ("regular", "economy", True, True),
        ("silver", "economy", False, True),
        ("gold", "economy", False, True),
        ("platinum", "premium", False, True),
    ],
)
def test_only_members_insured_or_business_travellers_are_eligible(desk, tier, cabin, insurance, eligible):
    user, flight, res = disrupted(desk, tier=tier, cabin=cabin, insurance=insurance)
    if eligible:
        issue(desk, user, flight, res)
    else:
        refused(desk, "Compensation is only for silver, gold and platinum members", user, flight, res)


def test_one_certificate_per_reservation_and_flight(desk):
    user, flight, res = disrupted(desk)
    first = issue(desk, user, flight, res)
    refused(desk, f"already compensated for flight {flight['flight_number']}", user, flight, res)
    assert first.certificate_id in refused(desk, "certificate", user, flight, res).error


def test_the_flight_must_be_on_the_users_own_reservation(desk):
    user, flight, res = disrupted(desk)
    other = desk.row("SELECT * FROM users WHERE id != ? LIMIT 1", user["id"])
    refused(desk, f"does not belong to user {other['id']}", other, flight, res)
    elsewhere = desk.row("SELECT * FROM flights WHERE status = 'cancelled' AND id != ? LIMIT 1", flight["id"])
    refused(desk, f"is not part of reservation {res.reservation_id}", user, elsewhere, res)


def test_a_traveller_moved_off_a_cancelled_flight_can_still_be_compensated_for_it(desk):
    user, flight, res = disrupted(desk, tier="gold", passengers=1)
    new = desk.alternative(flight)
    desk.ok(
        "update_reservation_flights",
        reservation_id=res.reservation_id,
        flights=[{"flight_number": new["flight_number"], "date": new["date"]}],
        payment_method_id=desk.card(user["id"]),
    )
    change = desk.row("SELECT * FROM flight_changes WHERE reservation_id = ?", res.reservation_id)
    assert (change["leg"], change["old_flight_id"], change["new_flight_id"]) == (1, flight["id"], new["id"])
    assert issue(desk, user, flight, res).amount == 100.0
