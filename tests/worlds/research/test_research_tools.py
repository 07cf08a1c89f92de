"""The research world's tools and billing: ranked, paged search over FTS5; paged documents;
find-in-page on opened documents only; the notebook; prices charged per call, page and new
document; a budget that refuses a call past it and changes nothing."""

from __future__ import annotations

import sqlite3

import pytest
from mcpsim_worlds.research.tools import PAGE_CHARS, PRICES, match_expression, pages_of

from mcpsim.world import billing


def test_this_python_has_fts5():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")  # raises if SQLite was built without FTS5


def test_every_tool_has_a_price(research):
    assert PRICES.unpriced(research.tools) == []
    assert billing.price_list(research) is PRICES


def test_search_ranks_the_named_company_first_and_pages(desk):
    name = desk.value("SELECT substr(title, 1, instr(title, ' annual report') - 1) FROM documents "
                      "WHERE title LIKE '% annual report, fiscal 2024' ORDER BY id LIMIT 1")  # fmt: skip
    first = desk.ok("search", query=f"{name} annual report fiscal 2024", limit=3)
    assert first.results[0].title == f"{name} annual report, fiscal 2024"
    assert first.results[0].snippet and first.total > 3 and first.more and first.cost == 2
    second = desk.ok("search", query=f"{name} annual report fiscal 2024", limit=3, page=2)
    assert {h.doc_id for h in first.results}.isdisjoint(h.doc_id for h in second.results)
    assert second.total == first.total


def test_query_syntax_never_reaches_fts5(desk):
    assert match_expression('NEAR("a" b) OR * -c:') == '"near" OR "a" OR "b" OR "or" OR "c"'
    desk.ok("search", query='"unbalanced AND (NEAR * title:x')
    result = desk.fails("search", "no words to search for", query="*** () ---")
    assert result.error is not None


def test_open_pages_a_document_and_bills_it_once(desk):
    long_doc = desk.value(
        "SELECT id FROM documents WHERE length(body) > ? ORDER BY length(body) DESC, id LIMIT 1", PAGE_CHARS + 50
    )
    body = desk.value("SELECT body FROM documents WHERE id = ?", long_doc)
    first = desk.ok("open", doc_id=long_doc)
    assert first.pages == len(pages_of(body)) >= 2 and first.cost == 5  # 1 per call + 4 per new document
    again = desk.ok("open", doc_id=long_doc, page=2)
    assert again.text == pages_of(body)[1] and again.cost == 1
    desk.fails("open", "has 2 page(s)" if first.pages == 2 else "there is no page", doc_id=long_doc, page=99)
    desk.fails("open", "Document doc_999999 not found", doc_id="doc_999999")


def test_find_in_page_needs_the_document_open(desk):
    report = desk.doc("% annual report, fiscal 2024")
    desk.fails("find_in_page", "is not open; open it first", doc_id=report, text="revenue")
    desk.ok("open", doc_id=report)
    found = desk.ok("find_in_page", doc_id=report, text="AUDITED REVENUE")
    assert found.matches and "Audited revenue" in found.matches[0].context and found.cost == 1


def test_notes_cite_only_opened_documents(desk):
    report = desk.doc("% annual report, fiscal 2024")
    desk.fails("save_note", "was never opened", title="Revenue", text="It grew.", sources=[report])
    desk.ok("open", doc_id=report)
    note = desk.ok("save_note", title="Revenue", text="It grew.", sources=[report, report])
    assert note.sources == [report]
    listed = desk.ok("list_notes")
    assert listed.total == 1 and listed.notes[0].note_id == note.note_id


def test_get_budget_shows_budget_spend_and_prices(desk):
    desk.ok("search", query="robotics revenue")
    budget = desk.ok("get_budget")
    assert (budget.budget, budget.spent, budget.left, budget.calls) == (400, 2, 398, 1)  # free calls are not billed
    prices = {line.tool: line.price for line in budget.prices}
    assert prices["open"] == "1 credits per call, 4 credits per new document" and prices["get_budget"] == "free"


def test_a_call_past_the_budget_is_refused_and_changes_nothing(desk):
    report = desk.doc("% annual report, fiscal 2024")
    desk.set_budget(6)
    desk.ok("search", query="annual report")  # 2 of 6
    before = desk.ok("get_budget")
    refused = desk.fails(
        "open", "Budget exceeded: this open call costs 5 credits and 4 of the episode's 6", doc_id=report
    )
    assert refused.changes == []
    after = desk.ok("get_budget")
    assert (after.spent, after.left, after.calls) == (before.spent, before.left, before.calls) == (2, 4, 1)
    desk.fails("find_in_page", "is not open", doc_id=report, text="revenue")  # the refused open delivered nothing
    desk.ok("search", query="annual report")
    desk.ok("search", query="annual report")  # spends the budget to the last credit
    desk.fails("search", "this search call costs 2 credits and 0 of the episode's 6", query="annual report")
    assert desk.spent() == 6 and desk.ok("get_budget").left == 0  # free calls still answer


def test_reads_stay_out_of_the_state_hash_and_change_log(desk):
    before = desk.state_hash()
    desk.ok("search", query="acquisition")
    assert desk.state_hash() == before and desk.episode.changes() == []
    assert desk.spent() == 2  # billed all the same: the ledger is episode state outside the world's rows


def test_charge_refuses_an_unpriced_tool():
    with pytest.raises(KeyError, match="no declared price"):
        PRICES.price("teleport")
    with pytest.raises(ValueError, match="cannot be negative"):
        billing.Price(call=-1)


def test_a_restored_snapshot_keeps_the_spend_and_rebuilds_the_index(desk, research):
    from mcpsim.engine._snapshots import load_untrusted, sign

    report = desk.doc("% annual report, fiscal 2024")
    desk.ok("open", doc_id=report)
    searched = desk.ok("search", query="annual report fiscal 2024 revenue")
    key = b"r" * 32
    restored = load_untrusted(research, sign(desk.episode.snapshot(), key), key)
    try:
        again = restored.call("search", {"query": "annual report fiscal 2024 revenue"}).value
        assert [h.doc_id for h in again.results] == [h.doc_id for h in searched.results]
        budget = restored.call("get_budget", {}).value
        assert (budget.spent, budget.left) == (9, 391)  # 5 for the open, 2 + 2 for the searches
        assert restored.call("open", {"doc_id": report}).value.cost == 1  # delivered before the snapshot
    finally:
        restored.close()


def test_search_newest_lists_the_later_document_first(desk):
    found = desk.ok("search_newest", query="annual report fiscal", limit=10)
    dates = [h.published for h in found.results]
    assert dates == sorted(dates, reverse=True) and found.cost == 2


def test_browse_lists_one_kind_between_two_dates(desk):
    listing = desk.ok("browse", kind="filing", published_after="2025-01-01", published_before="2025-12-31", limit=20)
    assert listing.total == desk.value("SELECT COUNT(*) FROM documents WHERE kind = 'filing' AND published >= '2025'")
    assert all(e.kind == "filing" and e.published.startswith("2025") for e in listing.documents)
    assert [e.published for e in listing.documents] == sorted((e.published for e in listing.documents), reverse=True)
    desk.invalid("browse", kind="filing", published_after="last year")


def test_document_info_says_what_opening_costs_and_list_opened_keeps_the_trail(desk):
    report = desk.doc("% annual report, fiscal 2024")
    info = desk.ok("get_document_info", doc_id=report)
    assert (info.opened, info.price_to_open) == (False, 5)
    desk.ok("open", doc_id=report)
    assert desk.ok("get_document_info", doc_id=report).price_to_open == 1
    assert [d.doc_id for d in desk.ok("list_opened").documents] == [report]
    sources = desk.ok("list_sources")
    assert sources.cost == 1 and sum(s.documents for s in sources.sources) == desk.value(
        "SELECT COUNT(*) FROM documents"
    )


def test_notes_are_rewritten_and_deleted(desk):
    report, other = desk.doc("% annual report, fiscal 2024"), desk.doc("% annual report, fiscal 2023")
    desk.ok("open", doc_id=report)
    note = desk.ok("save_note", title="Revenue", text="It grew.", sources=[report])
    desk.fails("update_note", "was never opened", note_id=note.note_id, text="It fell.", sources=[other])
    changed = desk.ok("update_note", note_id=note.note_id, text="It fell.", sources=[report])
    assert desk.ok("get_note", note_id=note.note_id) == changed and changed.text == "It fell."
    desk.ok("delete_note", note_id=note.note_id)
    desk.fails("get_note", f"Note {note.note_id} not found", note_id=note.note_id)
    assert desk.ok("list_notes").total == 0


def test_the_calculator_is_free(desk):
    assert desk.ok("calculate", expression="1130.7 - 988.2").result == 142.5
    assert desk.ok("get_budget").spent == 0
