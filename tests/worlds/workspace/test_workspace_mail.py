"""Mail: searching and reading, sending to valid addresses only, replies and forwards, attachments
by reference (every recipient must be able to open them), trash and labels."""

from __future__ import annotations

from typing import Any

import pytest
from workspace_support import ME, colleague

# -- reading -----------------------------------------------------------------------------------


def test_search_finds_threads_by_words_folder_label_and_sender(desk):
    found = desk.ok("search_mail", query="budget draft")
    budget = desk.thread("Q3 budget draft")
    assert budget["id"] in [t.thread_id for t in found.threads]
    hit = next(t for t in found.threads if t.thread_id == budget["id"])
    assert hit.labels == ["Finance"] and hit.message_count == 3 and hit.unread and hit.has_attachments
    assert ME not in hit.participants and colleague("dana") in hit.participants
    trash = desk.ok("search_mail", folder="trash", limit=50)
    assert trash.total_count == desk.value("SELECT COUNT(*) FROM threads WHERE location = 'trash'")
    assert all(t.location == "trash" for t in trash.threads)
    everything = desk.ok("search_mail", limit=50)
    assert all(t.location != "trash" for t in everything.threads)
    acme = desk.ok("search_mail", label="clients/acme")  # label names are case-insensitive
    assert {t.subject for t in acme.threads} == {
        "Acme Logistics renewal terms 2026-27",
        "MSA redlines - Acme Logistics",
    }
    assert desk.ok("search_mail", sender="nadia").threads[0].subject.startswith("Acme Logistics renewal")
    sent = desk.ok("search_mail", folder="sent", limit=50)
    assert sent.threads and all(
        desk.rows("SELECT 1 FROM messages WHERE thread_id = ? AND from_email = ?", t.thread_id, ME)
        for t in sent.threads
    )
    desk.fails("search_mail", "Label 'Nope' does not exist", label="Nope")


def test_search_dates_are_days_in_the_owners_time_zone(desk):
    # Dana's reply was sent 2026-05-14 16:20 in New York = 21:20 in London, still the 14th there.
    on_14th = desk.ok("search_mail", query="walkthrough", after="2026-05-14", before="2026-05-14")
    assert [t.subject for t in on_14th.threads] == ["Q3 budget draft for review"]
    assert desk.ok("search_mail", query="walkthrough", after="2026-05-15").total_count == 0
    desk.fails("search_mail", "'after' must not be later than 'before'", after="2026-05-15", before="2026-05-14")


def test_list_sizes_are_bounded_by_the_schema(desk):
    assert "less than or equal to 50" in desk.invalid("search_mail", limit=51)
    assert desk.invalid("search_mail", folder="spam")


def test_reading_a_thread_changes_nothing_and_hides_nobody_but_bcc(desk):
    budget = desk.thread("Q3 budget draft")
    before = desk.ep.state_hash()
    thread = desk.ok("get_thread", thread_id=budget["id"])
    assert desk.ep.state_hash() == before
    assert [m.from_email for m in thread.messages] == [ME, colleague("ravi"), colleague("dana")]
    first = thread.messages[0]
    assert first.to == [colleague("dana")] and sorted(first.cc) == [colleague("lukas"), colleague("ravi")]
    assert first.attachments[0].name == "Q3 Budget Draft" and first.attachments[0].you_can_open
    assert thread.messages[-1].sent_local.startswith("2026-05-14T21:20")
    desk.fails("get_thread", "Thread thr_00000000 not found", thread_id="thr_00000000")


def test_marking_a_thread_read_and_unread(desk):
    budget = desk.thread("Q3 budget draft")
    assert desk.ok("mark_thread_read", thread_id=budget["id"]).unread is False
    assert desk.value("SELECT COUNT(*) FROM messages WHERE thread_id = ? AND NOT is_read", budget["id"]) == 0
    assert desk.ok("mark_thread_read", thread_id=budget["id"], read=False).unread is True


# -- sending: valid addresses only -------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    ["jon.smith@acme", "jon smith@acme.com", "no-at-sign.com", "a..b@acme.com", "@acme.com", "x@-acme.com", "x@acme.c"],
)
def test_mail_to_an_invalid_address_is_refused(desk, address):
    desk.fails("send_mail", "is not a valid email address", to=[colleague("dana"), address], subject="Hi", body="Hello")


def test_mail_to_a_company_address_without_an_account_is_refused(desk):
    desk.fails(
        "send_mail",
        "There is no Larkspur Labs account dana.whitfeld@larkspurlabs.com",
        to=["dana.whitfeld@larkspurlabs.com"],
        subject="Hi",
        body="Hello",
    )


def test_each_person_once_and_never_to_yourself(desk):
    desk.fails(
        "send_mail",
        "appear(s) in more than one of to, cc and bcc",
        to=[colleague("dana")],
        cc=["Dana.Whitfield@larkspurlabs.com"],
        subject="Hi",
        body="Hello",
    )
    desk.fails("send_mail", "do not list your own address", to=[ME], subject="Hi", body="Hello")
    assert desk.invalid("send_mail", to=[], subject="Hi", body="Hello")


def test_sending_starts_a_sent_thread_with_its_recipients(desk):
    sent = desk.ok(
        "send_mail",
        to=["Nadia.Rahman@AcmeLogistics.com"],
        cc=[colleague("tom")],
        bcc=[colleague("priya")],
        subject="Renewal call agenda",
        body="Agenda attached soon.",
    )
    assert desk.location(sent.thread_id) == "sent"
    rows = desk.rows(
        "SELECT email, kind, name FROM message_recipients WHERE message_id = ? ORDER BY email", sent.message_id
    )
    assert [(r["email"], r["kind"]) for r in rows] == [
        ("nadia.rahman@acmelogistics.com", "to"),
        (colleague("priya"), "bcc"),
        (colleague("tom"), "cc"),
    ]
    assert rows[0]["name"] == "Nadia Rahman"
    message = desk.row("SELECT * FROM messages WHERE id = ?", sent.message_id)
    assert message["from_email"] == ME and message["sent_at"] == "2026-05-15T09:00:30+00:00"


# -- attachments by reference ------------------------------------------------------------------


def attaching(file: dict[str, Any], *to: str) -> dict[str, Any]:
    """send_mail's arguments: a short note to `to` with `file` attached."""
    return {"to": list(to), "subject": "Files", "body": "See attached", "attachment_file_ids": [file["id"]]}


def test_an_attachment_every_recipient_cannot_open_is_refused_until_it_is_shared(desk):
    budget = desk.file("Q3 Budget Draft")  # shared with Dana, Ravi, Lukas and Hana, not with Tom
    desk.ok("send_mail", **attaching(budget, colleague("dana")))
    desk.fails(
        "send_mail",
        f"{colleague('tom')} cannot open 'Q3 Budget Draft'",
        **attaching(budget, colleague("dana"), colleague("tom")),
    )
    desk.ok("share_file", file_id=budget["id"], emails=[colleague("tom")], role="viewer")
    sent = desk.ok("send_mail", **attaching(budget, colleague("dana"), colleague("tom")))
    assert sent.attachment_file_ids == [budget["id"]]
    assert desk.value("SELECT file_id FROM message_attachments WHERE message_id = ?", sent.message_id) == budget["id"]


def test_a_file_owned_by_someone_else_cannot_be_attached_for_people_without_access(desk):
    roadmap = desk.file("Product Roadmap H2 2026")  # Sofia's; shared with the owner and Lukas
    result = desk.fails(
        "send_mail",
        "only its owner, sofia.marquez@larkspurlabs.com, can share it",
        **attaching(roadmap, colleague("dana")),
    )
    assert "cannot open 'Product Roadmap H2 2026'" in result.error
    desk.ok("send_mail", **attaching(roadmap, colleague("lukas")))


def test_a_link_shared_file_can_go_to_anyone_and_an_invisible_file_to_nobody(desk):
    agenda = desk.file("June Offsite Agenda")  # anyone with the link can view
    desk.ok("send_mail", **attaching(agenda, "sam.whitaker@gmail.com"))
    hidden = desk.row(
        "SELECT f.* FROM files f WHERE f.owner_email != ? AND f.link_sharing = 'off' AND NOT EXISTS "
        "(SELECT 1 FROM file_permissions p WHERE p.file_id = f.id AND p.email = ?)",
        ME,
        ME,
    )
    desk.fails("send_mail", "not found among the files you can open", **attaching(hidden, colleague("dana")))


# -- replying and forwarding -------------------------------------------------------------------


def test_reply_all_answers_the_latest_sender_and_copies_the_others(desk):
    budget = desk.thread("Q3 budget draft")
    reply = desk.ok("reply_to_thread", thread_id=budget["id"], body="Tuesday 14:00 London works.")
    assert reply.to == [colleague("dana")] and sorted(reply.cc) == [colleague("lukas"), colleague("ravi")]
    assert reply.subject == "Re: Q3 budget draft for review" and reply.thread_id == budget["id"]
    message = desk.row("SELECT * FROM messages WHERE id = ?", reply.message_id)
    dana_msg = desk.value(
        "SELECT id FROM messages WHERE thread_id = ? AND from_email = ?", budget["id"], colleague("dana")
    )
    assert message["in_reply_to"] == dana_msg
    assert desk.value("SELECT last_message_at FROM threads WHERE id = ?", budget["id"]) == message["sent_at"]
    only_sender = desk.ok("reply_to_thread", thread_id=budget["id"], body="(just you)", reply_all=False)
    assert only_sender.to == [colleague("dana")] and only_sender.cc == []


def test_a_follow_up_on_your_own_thread_goes_to_the_same_people(desk):
    vendors = desk.thread("Logistics vendor comparison")
    reply = desk.ok("reply_to_thread", thread_id=vendors["id"], body="Any thoughts?")
    assert sorted(reply.to) == [colleague("ethan"), colleague("lukas")]


def test_replying_in_the_trash_is_refused_and_extra_cc_must_be_valid(desk):
    sale = desk.thread("Flash sale")
    desk.fails("reply_to_thread", "is in the trash; restore it", thread_id=sale["id"], body="Stop")
    budget = desk.thread("Q3 budget draft")
    desk.fails("reply_to_thread", "is not a valid email address", thread_id=budget["id"], body="x", add_cc=["priya@"])


def test_forwarding_carries_attachments_only_to_people_who_can_open_them(desk):
    redlines = desk.thread("MSA redlines")
    message_id = desk.value("SELECT id FROM messages WHERE thread_id = ?", redlines["id"])
    # The confidential MSA is shared with Tom only: Nadia (outside) cannot open it.
    desk.fails(
        "forward_message",
        "nadia.rahman@acmelogistics.com cannot open 'Acme Logistics MSA 2026 - redlines'",
        message_id=message_id,
        to=["nadia.rahman@acmelogistics.com"],
    )
    forwarded = desk.ok("forward_message", message_id=message_id, to=[colleague("tom")], note="For your files")
    assert forwarded.subject == "Fwd: MSA redlines - Acme Logistics" and len(forwarded.attachment_file_ids) == 1
    body = desk.value("SELECT body FROM messages WHERE id = ?", forwarded.message_id)
    assert body.startswith("For your files") and "---------- Forwarded message ----------" in body
    assert desk.location(forwarded.thread_id) == "sent" and forwarded.thread_id != redlines["id"]
    bare = desk.ok("forward_message", message_id=message_id, to=[colleague("priya")], include_attachments=False)
    assert bare.attachment_file_ids == []


# -- archive, trash and emptying the trash -----------------------------------------------------


def test_trash_keeps_the_thread_until_the_trash_is_emptied(desk):
    budget = desk.thread("Q3 budget draft")
    messages = desk.value("SELECT COUNT(*) FROM messages WHERE thread_id = ?", budget["id"])
    state = desk.ok("trash_thread", thread_id=budget["id"])
    assert state.location == "trash" and state.labels == ["Finance"]
    assert desk.value("SELECT COUNT(*) FROM messages WHERE thread_id = ?", budget["id"]) == messages
    desk.fails("trash_thread", "already in the trash", thread_id=budget["id"])
    assert desk.ok("restore_thread", thread_id=budget["id"]).location == "inbox"
    desk.fails("restore_thread", "is not in the trash", thread_id=budget["id"])
    parking = desk.thread("Parking permit")  # it was archived before it was trashed
    assert desk.ok("restore_thread", thread_id=parking["id"]).location == "archived"


def test_only_threads_in_the_trash_can_be_deleted_for_good(desk):
    budget = desk.thread("Q3 budget draft")
    sale = desk.thread("Flash sale")
    desk.fails("empty_trash", "is not in the trash (it is in inbox)", thread_ids=[sale["id"], budget["id"]])
    gone = desk.ok("empty_trash", thread_ids=[sale["id"]])
    assert gone.deleted_thread_ids == [sale["id"]] and gone.deleted_message_count == 1
    assert desk.rows("SELECT 1 FROM threads WHERE id = ?", sale["id"]) == []
    assert desk.rows("SELECT 1 FROM messages WHERE thread_id = ?", sale["id"]) == []
    trashed = desk.value("SELECT COUNT(*) FROM threads WHERE location = 'trash'")
    total = desk.value("SELECT COUNT(*) FROM threads")
    assert len(desk.ok("empty_trash").deleted_thread_ids) == trashed
    assert desk.value("SELECT COUNT(*) FROM threads") == total - trashed
    assert (
        desk.rows("SELECT 1 FROM message_recipients r LEFT JOIN messages m ON m.id = r.message_id WHERE m.id IS NULL")
        == []
    )
    desk.fails("empty_trash", "The trash is already empty")


def test_archiving_is_idempotent_and_not_for_trashed_threads(desk):
    budget = desk.thread("Q3 budget draft")
    assert desk.ok("archive_thread", thread_id=budget["id"]).location == "archived"
    before = desk.ep.state_hash()
    assert desk.ok("archive_thread", thread_id=budget["id"]).location == "archived"
    assert desk.ep.state_hash() == before
    assert desk.ok("move_to_inbox", thread_id=budget["id"]).location == "inbox"
    sale = desk.thread("Flash sale")
    desk.fails("archive_thread", "is in the trash", thread_id=sale["id"])
    desk.fails("move_to_inbox", "use restore_thread", thread_id=sale["id"])


# -- labels ------------------------------------------------------------------------------------


def test_a_label_must_exist_before_it_is_applied(desk):
    intro = desk.thread("Intro: Elena")
    desk.fails(
        "apply_label", "Label 'Partners' does not exist; create it first", label="Partners", thread_ids=[intro["id"]]
    )
    created = desk.ok("create_label", name="  Partners ")
    assert created.name == "Partners"
    change = desk.ok("apply_label", label="partners", thread_ids=[intro["id"]])
    assert change.changed_thread_ids == [intro["id"]]
    assert desk.ok("apply_label", label="Partners", thread_ids=[intro["id"]]).unchanged_thread_ids == [intro["id"]]
    assert desk.ok("remove_label", label="Partners", thread_ids=[intro["id"]]).changed_thread_ids == [intro["id"]]
    assert [lb.thread_count for lb in desk.ok("list_labels") if lb.name == "Partners"] == [0]


def test_label_names_are_unique_valid_and_nested_under_existing_parents(desk):
    desk.fails("create_label", "A label named 'Finance' already exists", name="FINANCE")
    desk.fails("create_label", "is a system folder", name="Trash")
    desk.fails("create_label", "The parent label 'Vendors' does not exist", name="Vendors/Velox")
    desk.fails("create_label", "has an empty level", name="Clients//Velox")
    desk.fails("create_label", "is not a valid label name", name="Clients/<Velox>")
    assert desk.ok("create_label", name="Clients / Velox").name == "Clients/Velox"


def test_trashed_threads_cannot_be_labelled(desk):
    sale = desk.thread("Flash sale")
    desk.fails("apply_label", "is in the trash", label="Receipts", thread_ids=[sale["id"]])
