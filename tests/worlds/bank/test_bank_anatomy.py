"""What the bank world declares through the world SDK: the standard calculator, its id formats,
ownership errors that name the id as given, and views built from rows that still mask numbers
(its irreversible tools and version: tests/worlds/test_world_folders.py)."""

from __future__ import annotations

import re

from mcpsim_worlds.bank import world as bank_world
from mcpsim_worlds.bank.rules import CARD_BIN

from mcpsim.world import World


def _format(kind: str) -> re.Pattern[str]:
    prefix, digits = bank_world.id_formats[kind]
    return re.compile(rf"{re.escape(prefix)}\d{{{digits}}}")


def test_the_calculator_is_the_standard_one_with_the_bank_example(bank: World) -> None:
    calculate = bank.tools["calculate"]
    assert (
        calculate.read_only
        and calculate.idempotent
        and list(bank.tools)[-2:]
        == [
            "calculate",
            "transfer_to_human_agent",
        ]
    )
    assert calculate.description.endswith("Use it for balances, remaining limits and totals.")
    assert "'2500 - 1875.40'" in calculate.input_schema()["properties"]["expression"]["description"]


def test_seeded_ids_follow_the_declared_formats(bank: World, b) -> None:
    assert bank.id_formats["account_number"] == ("", 10) and bank.id_formats["transaction"] == ("txn_", 9)
    for table, kind in (
        ("customers", "customer"),
        ("accounts", "account"),
        ("cards", "card"),
        ("payees", "payee"),
        ("transfers", "transfer"),
        ("transactions", "transaction"),
        ("disputes", "dispute"),
    ):
        ids = [r["id"] for r in b.rows(f"SELECT id FROM {table}")]
        assert ids and all(_format(kind).fullmatch(i) for i in ids), table
    assert all(re.fullmatch(r"4\d{9}", r["number"]) for r in b.rows("SELECT number FROM accounts"))
    assert all(re.fullmatch(rf"{CARD_BIN}\d{{12}}", r["number"]) for r in b.rows("SELECT number FROM cards"))


def test_ids_drawn_by_tools_follow_the_declared_formats(b) -> None:
    me, checking, savings = b.checking_with_savings()
    transfer = b.ok(
        "transfer_between_own_accounts", customer_id=me, from_account_id=checking, to_account_id=savings, amount=10.0
    )
    assert _format("transfer").fullmatch(transfer.transfer_id)
    lines = b.rows("SELECT id FROM transactions WHERE transfer_id = ?", transfer.transfer_id)
    assert len(lines) == 2 and all(_format("transaction").fullmatch(line["id"]) for line in lines)
    assert _format("payee").fullmatch(b.add_payee(me))
    ticket = b.ok(
        "transfer_to_human_agent", topic="other", summary="The customer wants a paper statement.", customer_id=me
    )
    assert _format("ticket").fullmatch(ticket.ticket_id) and ticket.customer_id == me


def test_ids_are_found_with_spaces_around_them_and_errors_name_them_as_given(b) -> None:
    me, checking, _ = b.checking_with_savings()
    assert b.ok("get_account", customer_id=f" {me} ", account_id=f" {checking}").account_id == checking
    b.fails("get_customer_profile", "Customer  cus_0000000  not found", customer_id=" cus_0000000 ")
    b.fails("get_account", f"Customer {me} has no account  acc_00000000", customer_id=me, account_id=" acc_00000000")


def test_views_built_from_rows_keep_numbers_masked(b) -> None:
    me, checking, _ = b.checking_with_savings()
    card = b.row("SELECT * FROM cards WHERE account_id = ? AND status != 'closed'", checking)
    view = b.ok("list_cards", customer_id=me).cards[0]
    assert (view.card_id, view.last4, view.account_id) == (card["id"], card["last4"], checking)
    assert card["number"] not in str(view)
    payee = b.row("SELECT * FROM payees WHERE customer_id = ? AND status = 'active' ORDER BY created_at LIMIT 1", me)
    listed = b.ok("list_payees", customer_id=me).payees[0]
    assert (listed.payee_id, listed.name, listed.account_number) == (
        payee["id"],
        payee["name"],
        "••••" + payee["account_number"][-4:],
    )
