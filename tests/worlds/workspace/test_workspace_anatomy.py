"""What the workspace world declares through the world SDK: its id formats, its not-found errors
(through `ctx.get`) and its views built from rows (its irreversible tools and version:
tests/worlds/test_world_folders.py)."""

from __future__ import annotations

import re

from workspace_support import ME, colleague

from mcpsim.world import World


def test_new_ids_follow_the_declared_formats(workspace: World, desk) -> None:
    assert workspace.id_formats["label"] == ("lbl_", 5) and workspace.id_formats["thread"] == ("thr_", 8)
    sent = desk.ok("send_mail", to=[colleague("dana")], subject="Numbers", body="See you Monday.")
    label = desk.ok("create_label", name="Audit")
    contact = desk.ok("add_contact", name="Ada Byrne", email="ada@byrne.example.com")
    event = desk.ok("create_event", title="Solo", start="2026-05-23T09:00", end="2026-05-23T09:30")
    assert re.fullmatch(r"msg_\d{8}", sent.message_id)
    assert re.fullmatch(r"thr_\d{8}", sent.thread_id)
    assert re.fullmatch(r"lbl_\d{5}", label.label_id)
    assert re.fullmatch(r"con_\d{7}", contact.contact_id)
    assert re.fullmatch(r"evt_\d{8}", event.event_id)


def test_ids_with_stray_spaces_are_found_and_unknown_ones_are_quoted_as_given(desk) -> None:
    thread = desk.thread("Q3 budget")
    assert desk.ok("get_thread", thread_id=f"  {thread['id']} ").thread_id == thread["id"]
    desk.fails("get_thread", "Thread thr_00000000 not found", thread_id="thr_00000000")
    desk.fails("get_thread", "Thread  thr_00000000  not found", thread_id=" thr_00000000 ")
    desk.fails("forward_message", "Message msg_00000000 not found", message_id="msg_00000000", to=[colleague("dana")])
    desk.fails("get_contact", "Contact  con_0000000 not found", contact_id=" con_0000000")
    desk.fails("apply_label", "Thread thr_00000000 not found", label="Finance", thread_ids=["thr_00000000"])


def test_views_read_the_row_with_its_id_under_the_views_name(desk) -> None:
    contact = desk.row("SELECT * FROM contacts ORDER BY id")
    view = desk.ok("get_contact", contact_id=contact["id"])
    assert view.model_dump() == {
        "contact_id": contact["id"],
        "name": contact["name"],
        "email": contact["email"],
        "phone": contact["phone"],
        "company": contact["company"],
        "job_title": contact["job_title"],
        "notes": contact["notes"],
        "starred": bool(contact["starred"]),
    }
    me = desk.row("SELECT * FROM users WHERE email = ?", ME)
    profile = desk.ok("verify_owner", email=ME, passcode=me["passcode"])
    assert (profile.name, profile.email, profile.title, profile.time_zone) == (
        me["name"],
        me["email"],
        me["title"],
        me["time_zone"],
    )
    assert profile.working_hours == f"{me['work_start']}-{me['work_end']} Mon-Fri ({me['time_zone']})"
