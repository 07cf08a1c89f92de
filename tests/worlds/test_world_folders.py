"""What every world folder declares the same way: which of its tools have an effect that leaves
the world (grading counts those even when a later call reverts their rows), and that the world's
version covers every file of the folder, so that no changed tool, rule, policy or task keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpsim.world._registry import load_world

WORLDS = Path(__file__).parents[2] / "worlds"

IRREVERSIBLE = {
    # a reservation paid, refunded or compensated, or a human involved
    "airline": {"book_reservation", "cancel_reservation", "issue_compensation_certificate", "transfer_to_human_agents"},
    # money moved, a card number issued, a dispute filed, a human involved
    "bank": {"transfer_between_own_accounts", "transfer_to_payee", "replace_card", "open_dispute"},
    # money moved, a parcel or a human involved
    "retail": {"place_order", "retry_order_payment", "cancel_order", "resend_refund", "issue_partial_refund"},
    # a message delivered, access given, an answer or a cancellation sent to other people's calendars
    "workspace": {"send_mail", "reply_to_thread", "forward_message", "share_file", "set_link_sharing"},
}
IRREVERSIBLE["bank"] |= {"transfer_to_human_agent"}
IRREVERSIBLE["retail"] |= {"return_delivered_order_items", "exchange_delivered_order_items", "transfer_to_human_agent"}
IRREVERSIBLE["workspace"] |= {"respond_to_invitation", "cancel_event"}
# a fare difference, bags or insurance charged (or refunded); invitations and updates sent to attendees
IRREVERSIBLE["airline"] |= {
    "update_reservation_flights",
    "update_reservation_cabin",
    "update_reservation_baggages",
    "add_travel_insurance",
}
IRREVERSIBLE["retail"] |= {"modify_pending_order_items", "modify_pending_order_payment"}
IRREVERSIBLE["workspace"] |= {"create_event", "update_event"}


@pytest.mark.parametrize("name", sorted(IRREVERSIBLE))
def test_the_tools_whose_effect_leaves_the_world_are_declared_irreversible(name: str) -> None:
    world = load_world(name)
    assert {tool for tool, spec in world.tools.items() if spec.irreversible} == IRREVERSIBLE[name]


@pytest.mark.parametrize("name", sorted(IRREVERSIBLE))
def test_the_version_covers_every_file_of_the_world_folder(name: str) -> None:
    """The seeder lives in a subpackage (seed/): the version must still hash the tools, rules,
    views, manifest, policy and tasks, not only the seed folder."""
    folder = WORLDS / name
    files = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.suffix in {".py", ".md", ".yaml", ".yml", ".json"} and "__pycache__" not in p.parts
    }
    assert {"__init__.py", "world.yaml", "policy.md", "rules.py", "views.py", "seed/__init__.py"} <= files
    assert any(f.startswith("tools/") for f in files) and any(f.startswith("tasks/") for f in files)
    assert {f for f, _ in load_world(name).source_files()} == files
