"""Identifying users, their profile and reservations, gift cards, and the support tools."""

from __future__ import annotations


def test_a_user_is_found_by_email_and_date_of_birth_together(desk):
    user = desk.row("SELECT * FROM users ORDER BY id LIMIT 1")
    found = desk.ok("find_user", email=user["email"].upper(), date_of_birth=user["date_of_birth"])
    assert (found.user_id, found.membership) == (user["id"], user["membership"])
    desk.fails(
        "find_user",
        "No user matches this email address and date of birth",
        email=user["email"],
        date_of_birth="1900-01-01",
    )
    desk.fails("find_user", "No user matches", email="nobody@example.com", date_of_birth=user["date_of_birth"])
    assert desk.call("find_user", email=user["email"], date_of_birth="01/02/1990").is_error  # not YYYY-MM-DD


def test_user_details_show_tier_payment_methods_and_reservations(desk):
    user_id = desk.value("SELECT user_id FROM reservations GROUP BY user_id ORDER BY COUNT(*) DESC LIMIT 1")
    details = desk.ok("get_user_details", user_id=user_id)
    methods = desk.rows("SELECT * FROM payment_methods WHERE user_id = ?", user_id)
    assert {m.payment_method_id for m in details.payment_methods} == {m["id"] for m in methods}
    assert details.reservation_count == len(desk.rows("SELECT id FROM reservations WHERE user_id = ?", user_id))
    desk.fails("get_user_details", "User nobody_here_0000 not found", user_id="nobody_here_0000")


def test_expired_cards_and_used_or_expired_certificates_are_shown_as_unusable(desk):
    user = desk.user()
    desk.give(user["id"], "certificate", 5000, "certificate_old", expires_on="2026-05-01")
    desk.give(user["id"], "certificate", 0, "certificate_used", status="used")
    desk.arrange(
        "INSERT INTO payment_methods (id, user_id, kind, brand, last4, exp_month, exp_year, status, created_at) "
        "VALUES ('credit_card_old', ?, 'credit_card', 'Visa', '1111', 4, 2026, 'active', '2024-01-01')",
        user["id"],
    )
    views = {m.payment_method_id: m for m in desk.ok("get_user_details", user_id=user["id"]).payment_methods}
    assert (views["certificate_old"].status, views["certificate_old"].usable) == ("expired", False)
    assert (views["certificate_used"].status, views["certificate_used"].usable) == ("used", False)
    assert views["credit_card_old"].expired and not views["credit_card_old"].usable


def test_reservations_are_listed_newest_first_in_bounded_pages(desk):
    user_id = desk.value("SELECT user_id FROM reservations GROUP BY user_id ORDER BY COUNT(*) DESC LIMIT 1")
    ids = [
        r["id"]
        for r in desk.rows("SELECT id FROM reservations WHERE user_id = ? ORDER BY created_at DESC, id", user_id)
    ]
    assert len(ids) >= 3
    page = desk.ok("list_user_reservations", user_id=user_id, limit=2)
    rest = desk.ok("list_user_reservations", user_id=user_id, limit=50, offset=2)
    assert page.total_count == len(ids) and [r.reservation_id for r in page.reservations + rest.reservations] == ids
    assert desk.call("list_user_reservations", user_id=user_id, limit=51).is_error
    assert desk.call("list_user_reservations", user_id=user_id, status="lost").is_error


def test_reservation_details_report_the_trip_status(desk):
    completed = desk.value(
        "SELECT r.id FROM reservations r WHERE r.status = 'confirmed' "
        "AND NOT EXISTS (SELECT 1 FROM reservation_flights l "
        "JOIN flights f ON f.id = l.flight_id WHERE l.reservation_id = r.id AND f.status NOT IN ('landed')) LIMIT 1"
    )
    assert desk.ok("get_reservation_details", reservation_id=completed).trip_status == "completed"
    assert desk.ok("get_reservation_details", reservation_id=completed.lower()).reservation_id == completed
    desk.fails("get_reservation_details", "Reservation ZZZZZZ not found", reservation_id="ZZZZZZ")


def test_a_gift_card_is_added_once_to_one_account(desk):
    code = desk.value("SELECT gift_card_code FROM payment_methods WHERE user_id IS NULL AND kind = 'gift_card' LIMIT 1")
    a, b = desk.rows("SELECT * FROM users ORDER BY id LIMIT 2")
    card = desk.ok("add_gift_card", user_id=a["id"], gift_card_code=code.lower())
    assert (
        card.kind == "gift_card"
        and desk.value("SELECT user_id FROM payment_methods WHERE id = ?", card.payment_method_id) == a["id"]
    )
    desk.fails("add_gift_card", "is already on this account", user_id=a["id"], gift_card_code=code)
    desk.fails("add_gift_card", "has already been added to another account", user_id=b["id"], gift_card_code=code)
    desk.fails("add_gift_card", "is not valid", user_id=b["id"], gift_card_code="GC-0000-0000-0000")
