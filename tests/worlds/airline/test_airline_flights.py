"""Airports, flight search and flight status."""

from __future__ import annotations

from datetime import datetime, timedelta


def test_airports_are_listed_and_filtered(desk):
    every = desk.ok("list_airports")
    assert every.total_count == desk.value("SELECT COUNT(*) FROM airports") == len(every.airports)
    chicago = desk.ok("list_airports", query="chicago")
    assert [a.code for a in chicago.airports] == ["ORD"]
    assert desk.ok("list_airports", limit=2).total_count == every.total_count
    assert desk.call("list_airports", limit=51).is_error


def test_direct_search_shows_every_flight_of_the_day_with_fares_and_seats(desk):
    flight = desk.future_flight()
    found = desk.ok(
        "search_direct_flights", origin=flight["origin"].lower(), destination=flight["destination"], date=flight["date"]
    )
    same_day = desk.rows(
        "SELECT * FROM flights WHERE origin = ? AND destination = ? AND date = ?",
        flight["origin"],
        flight["destination"],
        flight["date"],
    )
    assert {f.flight_number for f in found.flights} == {f["flight_number"] for f in same_day}
    offer = next(f for f in found.flights if f.flight_number == flight["flight_number"])
    economy = next(c for c in offer.cabins if c.cabin == "economy")
    business = next(c for c in offer.cabins if c.cabin == "business")
    standard = flight["price_economy_cents"]
    assert (economy.standard, economy.basic, economy.flex) == (
        standard / 100,
        int(standard * 0.8) // 100,
        standard / 100 + 60,
    )
    assert business.basic is None and business.flex == flight["price_business_cents"] / 100 + 150
    assert economy.seats_available == flight["seats_economy"] and offer.bookable


def test_search_marks_departed_and_cancelled_flights_as_not_bookable(desk):
    landed = desk.row("SELECT * FROM flights WHERE status = 'landed' LIMIT 1")
    found = desk.ok(
        "search_direct_flights", origin=landed["origin"], destination=landed["destination"], date=landed["date"]
    )
    assert not next(f for f in found.flights if f.flight_number == landed["flight_number"]).bookable
    desk.fails(
        "search_direct_flights",
        "does not fly to or from an airport with code XXX",
        origin="XXX",
        destination=landed["destination"],
        date=landed["date"],
    )
    desk.fails("search_direct_flights", "same airport", origin="ORD", destination="ORD", date=landed["date"])
    desk.fails("search_direct_flights", "not a valid date", origin="ORD", destination="DFW", date="2026-02-30")


def test_one_stop_itineraries_connect_within_one_to_eight_hours(desk):
    flight = desk.future_flight()
    hub = desk.row(
        "SELECT * FROM flights WHERE origin = ? AND date = ? AND status = 'scheduled' LIMIT 1",
        flight["destination"],
        flight["date"],
    )
    found = desk.ok(
        "search_onestop_flights", origin=flight["origin"], destination=hub["destination"], date=flight["date"], limit=20
    )
    for itinerary in found.itineraries:
        first, second = itinerary.legs
        assert first.destination == second.origin and first.origin == flight["origin"]
        gap = datetime.fromisoformat(second.expected_departure) - datetime.fromisoformat(first.expected_arrival)
        assert timedelta(hours=1) <= gap <= timedelta(hours=8)
        assert itinerary.connection_minutes == gap.total_seconds() // 60
        assert "cancelled" not in (first.status, second.status)
    assert desk.call("search_onestop_flights", origin="ORD", destination="DFW", date=flight["date"], limit=21).is_error


def test_flight_status_reports_delays_and_cancellations(desk):
    delayed = desk.row("SELECT * FROM flights WHERE delay_minutes > 0 AND status = 'landed' LIMIT 1")
    status = desk.ok("get_flight_status", flight_number=delayed["flight_number"], date=delayed["date"]).flight
    assert (status.status, status.delay_minutes, status.actual_arrival) == (
        "landed",
        delayed["delay_minutes"],
        delayed["actual_arrival"],
    )
    cancelled = desk.row("SELECT * FROM flights WHERE status = 'cancelled' LIMIT 1")
    status = desk.ok("get_flight_status", flight_number=cancelled["flight_number"], date=cancelled["date"]).flight
    assert status.status == "cancelled" and status.expected_departure is None
    desk.fails("get_flight_status", "There is no flight MRD9999", flight_number="MRD9999", date="2026-05-20")
    assert desk.call("get_flight_status", flight_number="9999", date="2026-05-20").is_error
