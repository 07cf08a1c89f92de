"""What the airline world declares to the SDK: which tools are irreversible, its id formats, the
files that make up its version, and views that carry the rows they were built from."""

from __future__ import annotations

import re

from mcpsim_worlds.airline import world
from mcpsim_worlds.airline.rules import ID_FORMATS


def test_the_tools_whose_effect_leaves_the_world_are_irreversible():
    irreversible = {name for name, spec in world.tools.items() if spec.irreversible}
    assert irreversible == {
        "book_reservation",
        "cancel_reservation",
        "issue_compensation_certificate",
        "transfer_to_human_agents",
    }


def test_the_world_declares_its_id_formats_and_the_seed_and_tools_draw_in_them(desk):
    assert world.id_formats == ID_FORMATS

    def pattern(kind: str) -> re.Pattern[str]:
        prefix, digits = ID_FORMATS[kind]
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


def test_the_world_version_covers_every_file_of_the_package():
    """The seeder lives in a subpackage (seed/): the version must still hash the tools, the rules
    and the policy, not only the seed folder."""
    names = {name for name, _ in world.source_files()}
    assert {"__init__.py", "rules.py", "views.py", "tools/booking.py", "seed/bookings.py", "policy.md"} <= names


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
