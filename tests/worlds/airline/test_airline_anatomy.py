"""What the airline world declares to the SDK: its id formats and views that carry the rows they
were built from (its irreversible tools and version: tests/worlds/test_world_folders.py)."""

from __future__ import annotations

import re

from mcpsim_worlds.airline import world


def test_the_world_declares_its_id_formats_and_the_seed_and_tools_draw_in_them(desk):
    assert world.id_formats["payment"] == ("txn_", 8) and world.id_formats["frequent_flyer"] == ("", 9)

    def pattern(kind: str) -> re.Pattern[str]:
        prefix, digits = world.id_formats[kind]
        return re.compile(rf"{re.escape(prefix)}\d{{{digits}}}")

    seeded = desk.rows("SELECT id, kind FROM payment_methods")
    assert seeded and all(pattern(m["kind"]).fullmatch(m["id"]) for m in seeded)
    assert all(pattern("payment").fullmatch(p["id"]) for p in desk.rows("SELECT id FROM payments"))
    assert all(
        pattern("frequent_flyer").fullmatch(u["frequent_flyer_number"])
        for u in desk.rows("SELECT frequent_flyer_number FROM users")
    )
    ticket = desk.ok("transfer_to_human_agents", summary="The user asks for a supervisor.")
    assert pattern("ticket").fullmatch(ticket.ticket_id)


def test_views_built_from_rows_name_the_rows_ids_as_the_agent_sees_them(desk):
    reservation = desk.row("SELECT * FROM reservations WHERE status = 'confirmed' LIMIT 1")
    details = desk.ok("get_reservation_details", reservation_id=reservation["id"])
    assert (details.reservation_id, details.user_id, details.booked_at) == (
        reservation["id"],
        reservation["user_id"],
        reservation["created_at"],
    )
    payments = desk.payments(reservation["id"])
    assert [(p.transaction_id, p.payment_method_id) for p in details.payments] == [
        (p["id"], p["payment_method_id"]) for p in payments
    ]
    user = desk.row("SELECT * FROM users WHERE id = ?", reservation["user_id"])
    found = desk.ok("find_user", email=user["email"], date_of_birth=user["date_of_birth"])
    assert (found.user_id, found.first_name, found.email) == (user["id"], user["first_name"], user["email"])
