"""Files and sharing (only the owner shares; exactly viewer, commenter or editor; confidential
files stay inside the company), contacts, and verifying the owner."""

from __future__ import annotations

from workspace_support import ME, colleague

# -- verifying the owner -----------------------------------------------------------------------


def test_the_owner_is_verified_by_email_and_passcode(desk):
    profile = desk.ok("verify_owner", email=" Maya.Chen@larkspurlabs.com ", passcode="482916")
    assert profile.verified and profile.name == "Maya Chen" and profile.time_zone == "Europe/London"
    assert profile.working_hours == "09:00-17:30 Mon-Fri (Europe/London)"
    desk.fails("verify_owner", "Verification failed", email=ME, passcode="482917")
    desk.fails("verify_owner", "Verification failed", email=colleague("priya"), passcode="482916")
    assert desk.invalid("verify_owner", email=ME, passcode="1234567890123")


# -- files -------------------------------------------------------------------------------------


def test_search_lists_only_files_the_owner_can_open(desk):
    everything = desk.ok("search_files", limit=50)
    names = {f.name for f in everything.files}
    assert "Sales Compensation Plan 2026" not in names  # Ethan's, not shared with the owner
    assert everything.total_count == desk.value(
        "SELECT COUNT(*) FROM files f WHERE owner_email = ? OR EXISTS "
        "(SELECT 1 FROM file_permissions p WHERE p.file_id = f.id AND p.email = ?)",
        ME,
        ME,
    )
    theirs = desk.ok("search_files", owned_by="others", limit=50)
    assert theirs.files and all(f.owner_email != ME and f.your_role != "owner" for f in theirs.files)
    budget = desk.ok("search_files", query="q3 budget").files
    assert [f.name for f in budget] == ["Q3 Budget Draft"] and budget[0].your_role == "owner"
    shared = desk.ok("search_files", shared_with="HANA.SATO@larkspurlabs.com", owned_by="me").files
    assert "Q3 Budget Draft" in [f.name for f in shared]
    comp = desk.file("Sales Compensation Plan 2026")
    desk.fails("get_file", "not found among the files you can open", file_id=comp["id"])
    desk.fails("list_file_permissions", "not found among the files you can open", file_id=comp["id"])


def test_sharing_gives_exactly_the_role_and_leaves_everyone_else_alone(desk):
    budget = desk.file("Q3 Budget Draft")
    before = desk.grants(budget["id"])
    assert before == {
        colleague("dana"): "commenter",
        colleague("hana"): "viewer",
        colleague("ravi"): "viewer",
        colleague("lukas"): "viewer",
    }
    result = desk.ok("share_file", file_id=budget["id"], emails=[colleague("ravi"), colleague("tom")], role="commenter")
    assert {p.email: p.role for p in result.permissions} == {
        **before,
        colleague("ravi"): "commenter",
        colleague("tom"): "commenter",
    }
    grant = desk.row("SELECT * FROM file_permissions WHERE file_id = ? AND email = ?", budget["id"], colleague("tom"))
    assert grant["granted_by"] == ME
    # Sharing again changes the role, down as well as up.
    desk.ok("share_file", file_id=budget["id"], emails=[colleague("dana")], role="viewer")
    desk.ok("share_file", file_id=budget["id"], emails=[colleague("hana")], role="editor")
    assert desk.grants(budget["id"])[colleague("dana")] == "viewer"
    assert desk.grants(budget["id"])[colleague("hana")] == "editor"
    state = desk.ep.state_hash()
    desk.ok("share_file", file_id=budget["id"], emails=[colleague("hana")], role="editor")  # idempotent
    assert desk.ep.state_hash() == state


def test_roles_are_exactly_viewer_commenter_or_editor(desk):
    budget = desk.file("Q3 Budget Draft")
    for role in ("owner", "admin", "Editor", "reader"):
        assert desk.invalid("share_file", file_id=budget["id"], emails=[colleague("ravi")], role=role)


def test_only_the_owner_of_a_file_changes_its_sharing(desk):
    roadmap = desk.file("Product Roadmap H2 2026")  # Sofia's; the owner is an editor
    owner = "Only the owner of 'Product Roadmap H2 2026', Sofia Marquez (sofia.marquez@larkspurlabs.com)"
    desk.sharing_fails(roadmap, owner, [colleague("dana")])
    desk.fails("revoke_access", "your role on it is editor", file_id=roadmap["id"], email=colleague("lukas"))
    desk.fails("set_link_sharing", "Only the owner", file_id=roadmap["id"], access="viewer")


def test_a_confidential_file_stays_inside_the_company(desk):
    msa = desk.file("Acme Logistics MSA 2026 - redlines")
    outside = [colleague("priya"), "nadia.rahman@acmelogistics.com"]
    desk.sharing_fails(msa, "is confidential and can only be shared inside Larkspur Labs", outside)
    desk.fails("set_link_sharing", "cannot be opened by link", file_id=msa["id"], access="viewer")
    desk.ok("share_file", file_id=msa["id"], emails=[colleague("priya")], role="viewer")
    q2 = desk.file("Q2 Operations Review")  # not confidential: outside people are fine
    desk.ok("share_file", file_id=q2["id"], emails=["julia.novak@northgatecapital.com"], role="viewer")


def test_sharing_needs_valid_addresses_and_not_the_owner_themself(desk):
    budget = desk.file("Q3 Budget Draft")
    desk.sharing_fails(budget, "is not a valid email address", ["ravi@larkspur"])
    desk.sharing_fails(budget, "There is no Larkspur Labs account", ["ravi@larkspurlabs.com"])
    desk.sharing_fails(budget, "you cannot share it with yourself", [ME], role="editor")


def test_revoking_removes_one_grant_and_link_sharing_is_separate(desk):
    q2 = desk.file("Q2 Operations Review")
    result = desk.ok("revoke_access", file_id=q2["id"], email="Ben.Carter@finchandco.com")
    assert "ben.carter@finchandco.com" not in {p.email for p in result.permissions}
    assert set(desk.grants(q2["id"])) == {colleague("lukas"), colleague("ravi"), colleague("dana")}
    desk.fails("revoke_access", "has no access grant", file_id=q2["id"], email="ben.carter@finchandco.com")
    agenda = desk.file("June Offsite Agenda")
    assert desk.ok("set_link_sharing", file_id=agenda["id"], access="off").link_sharing == "off"
    assert desk.value("SELECT link_sharing FROM files WHERE id = ?", agenda["id"]) == "off"
    assert desk.grants(agenda["id"]) == {colleague("priya"): "editor"}


def test_file_details_and_permissions(desk):
    board = desk.file("Board Deck May 2026")
    details = desk.ok("get_file", file_id=board["id"])
    assert (details.owner_name, details.your_role, details.confidential, details.shared_with_count) == (
        "Grace Liu",
        "commenter",
        True,
        2,
    )
    perms = desk.ok("list_file_permissions", file_id=board["id"])
    assert perms.owner_email == colleague("grace") and [p.email for p in perms.permissions] == [colleague("dana"), ME]


# -- contacts ----------------------------------------------------------------------------------


def test_search_covers_contacts_and_the_directory(desk):
    found = desk.ok("search_contacts", query="dana")
    assert found.people[0].source == "contact" and found.people[0].time_zone == "America/New_York"
    assert sum(p.email == colleague("dana") for p in found.people) == 1
    sofia = desk.ok("search_contacts", query="sofia marquez").people
    assert [(p.source, p.time_zone) for p in sofia] == [("directory", "America/Los_Angeles")]
    acme = desk.ok("search_contacts", query="acme").people
    assert [p.email for p in acme] == ["nadia.rahman@acmelogistics.com"]
    assert desk.ok("search_contacts", query="elena").total_count == 0


def test_adding_a_contact_needs_a_valid_new_address(desk):
    added = desk.ok(
        "add_contact",
        name="Elena  Petrova",
        email="Elena@BluefinMedia.co",
        phone="+44 20 7946 0321",
        company="Bluefin Media",
        job_title="Head of Partnerships",
    )
    row = desk.row("SELECT * FROM contacts WHERE id = ?", added.contact_id)
    assert (row["name"], row["email"], row["phone"]) == ("Elena Petrova", "elena@bluefinmedia.co", "+44 20 7946 0321")
    desk.fails(
        "add_contact", "is already in your contacts as Elena Petrova", name="E. Petrova", email="elena@bluefinmedia.co"
    )
    desk.fails("add_contact", "is not a valid email address", name="X", email="elena@bluefin")
    desk.fails("add_contact", "There is no Larkspur Labs account", name="X", email="x.y@larkspurlabs.com")
    assert desk.invalid("add_contact", name="X", email="x@y.com", phone="call me maybe")


def test_updating_a_contact_changes_only_what_is_given(desk):
    nadia = desk.row("SELECT * FROM contacts WHERE email = 'nadia.rahman@acmelogistics.com'")
    updated = desk.ok("update_contact", contact_id=nadia["id"], phone="+44 20 7946 0999", starred=False)
    assert (updated.phone, updated.company, updated.starred) == ("+44 20 7946 0999", "Acme Logistics", False)
    row = desk.row("SELECT * FROM contacts WHERE id = ?", nadia["id"])
    assert row["updated_at"] == "2026-05-15T09:00:30+00:00" and row["notes"] == nadia["notes"]
    state = desk.ep.state_hash()
    desk.ok("update_contact", contact_id=nadia["id"], phone="+44 20 7946 0999")
    assert desk.ep.state_hash() == state  # nothing changed, not even updated_at
    ben = desk.row("SELECT * FROM contacts WHERE email = 'ben.carter@finchandco.com'")
    desk.fails(
        "update_contact", "is already in your contacts as Ben Carter", contact_id=nadia["id"], email=ben["email"]
    )
    desk.fails("get_contact", "Contact con_0000000 not found", contact_id="con_0000000")
