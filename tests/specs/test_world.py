"""A compiled world is a real World: episodes, the in-process SDK client, a stdio subprocess."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcpsim.engine._episode import Episode
from mcpsim.serve._mcp import build_server
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec
from mcpsim.world import ToolContext
from tests.conftest import CLEAN_ENV

pytestmark = pytest.mark.anyio
SPECS = Path(__file__).parents[2] / "examples" / "specs"


@pytest.fixture(scope="module")
def library():
    return compile_spec(load_spec(SPECS / "library.yaml"))


@pytest.fixture
def episode(library, templates) -> Episode:
    return Episode.create(library.world, seed=0, scale="small", templates=templates)


def one(episode: Episode, sql: str) -> dict:
    rows = episode.query(sql)
    assert rows, sql
    return rows[0]


def test_tools_carry_annotations_and_the_policy_names_the_rules(library):
    tools = library.world.tools
    assert tools["get_book"].read_only and tools["get_book"].idempotent
    assert tools["withdraw_book"].destructive and not tools["lend_book"].read_only
    assert tools["list_books"].has_limit
    assert tools["lend_book"].input_schema()["required"] == ["book_id", "member_id"]
    assert "No copy of ‹book title› is left" in library.world.policy
    assert "wait for an explicit yes" in library.world.policy


def test_lending_moves_stock_and_a_refusal_changes_nothing(episode):
    book = one(episode, "SELECT id, copies FROM books WHERE copies = 1 LIMIT 1")
    member = one(episode, "SELECT id FROM members WHERE status = 'active' LIMIT 1")
    lent = episode.call("lend_book", {"book_id": book["id"], "member_id": member["id"]})
    assert not lent.is_error and lent.value.loan_id.startswith("L") and lent.value.status == "open"
    assert lent.value.lent_on == "2026-05-15"
    assert one(episode, f"SELECT copies FROM books WHERE id = '{book['id']}'")["copies"] == 0
    before = episode.state_hash()
    refused = episode.call("lend_book", {"book_id": book["id"], "member_id": member["id"]})
    assert refused.error.startswith("No copy of ") and episode.state_hash() == before


def test_ownership_state_machines_and_money(episode):
    loan = one(episode, "SELECT id, member_id, book_id FROM loans WHERE status = 'open' LIMIT 1")
    stranger = one(episode, f"SELECT id FROM members WHERE id != '{loan['member_id']}' LIMIT 1")
    wrong = episode.call("return_book", {"loan_id": loan["id"], "member_id": stranger["id"]})
    assert wrong.error == f"Loan {loan['id']} does not belong to member {stranger['id']}"
    back = episode.call("return_book", {"loan_id": loan["id"], "member_id": loan["member_id"]})
    assert back.value.status == "returned"
    again = episode.call("return_book", {"loan_id": loan["id"], "member_id": loan["member_id"]})
    assert again.error == f"Loan {loan['id']} is returned; it cannot become returned"
    rich = one(episode, "SELECT id, credit FROM members WHERE status = 'active' ORDER BY credit DESC LIMIT 1")
    poor = one(episode, f"SELECT id, credit FROM members WHERE id != '{rich['id']}' LIMIT 1")
    moved = episode.call(
        "transfer_credit", {"source_member_id": rich["id"], "target_member_id": poor["id"], "amount": 0.25}
    )
    assert moved.value.source.credit == (rich["credit"] - 25) / 100
    assert moved.value.target.credit == (poor["credit"] + 25) / 100
    overdraft = {"source_member_id": rich["id"], "target_member_id": poor["id"], "amount": 100_000}
    assert episode.call("transfer_credit", overdraft).error == f"Member {rich['id']} does not have enough credit"


def test_unique_fields_and_paging(episode):
    taken = one(episode, "SELECT email FROM members LIMIT 1")["email"]
    dup = episode.call("register_member", {"name": "Ada Lovelace", "email": taken})
    assert dup.error == "A member with this email already exists"
    first = episode.call("list_books", {"limit": 5}).value
    second = episode.call("list_books", {"limit": 5, "offset": first.next_offset}).value
    assert first.total == 25 and len(first.items) == 5 and first.next_offset == 5
    assert not {b.book_id for b in first.items} & {b.book_id for b in second.items}


def test_a_compiled_world_is_deterministic(library, templates):
    again = compile_spec(load_spec(SPECS / "library.yaml")).world
    assert again.version == library.world.version
    a = Episode.create(library.world, seed=3, scale="small", templates=templates)
    b = Episode.create(again, seed=3, scale="small", templates=templates)
    assert a.state_hash() == b.state_hash()


async def test_served_in_process_to_the_sdk_client(library, episode):
    member = one(episode, "SELECT id, name FROM members LIMIT 1")
    with anyio.fail_after(20):
        async with Client(build_server(library.world, lambda _id: episode)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            found = await client.call_tool("search_members", {"query": member["name"].split()[0]})
            missing = await client.call_tool("get_book", {"book_id": "B999999"})
    assert tools["get_book"].annotations.read_only_hint is True
    assert tools["withdraw_book"].annotations.destructive_hint is True
    assert tools["get_book"].output_schema["required"] == ["book_id", "title", "author", "genre", "copies"]
    assert member["id"] in [m["member_id"] for m in found.structured_content["items"]]
    assert missing.is_error and "Book B999999 not found" in missing.content[0].text


@pytest.mark.system
async def test_served_over_stdio_from_the_spec_file(tmp_path):
    clinic = SPECS / "clinic.yaml"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpsim.acceptance", "serve", str(clinic), "--scale", "small"],
        env=CLEAN_ENV | {"PYTHONUNBUFFERED": "1"},
        cwd=str(tmp_path),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            listed = (await client.call_tool("list_doctors", {"accepting": True})).structured_content["items"]
            doctors = [d for d in listed if d["booked"] < d["capacity"]]
            patients = (await client.call_tool("search_patients", {"query": "a", "limit": 1})).structured_content
            booked = await client.call_tool(
                "book_appointment",
                {
                    "patient_id": patients["items"][0]["patient_id"],
                    "doctor_id": doctors[0]["doctor_id"],
                    "day": "2026-05-20",
                },
            )
            past = await client.call_tool(
                "book_appointment",
                {
                    "patient_id": patients["items"][0]["patient_id"],
                    "doctor_id": doctors[0]["doctor_id"],
                    "day": "2026-05-01",
                },
            )
    assert not booked.is_error, booked.content[0].text
    assert booked.structured_content["status"] == "booked"
    assert past.is_error and "An appointment must be after today, not on 2026-05-01" in past.content[0].text


def test_a_load_sees_the_calls_own_pending_writes(templates):
    """`EntityModel.load` behaves like `ctx.get`: a row deleted earlier in the same call is gone
    (the session flushes before it reads), not handed back from the database."""
    compiled = compile_spec(load_spec(SPECS / "library.yaml"))
    member = compiled.models["member"]

    @compiled.world.tool(destructive=True)
    def drop_then_load(ctx: ToolContext, member_id: str) -> str:
        """Delete a member, then load it again in the same call."""
        ctx.session.delete(member.load(ctx, member_id))
        try:
            member.load(ctx, member_id)
        except Exception as exc:  # the world's not-found error
            return f"gone: {exc}"
        return "still there"

    ep = Episode.create(compiled.world, seed=0, scale="small", templates=templates)
    try:
        key = ep.query("SELECT id FROM members ORDER BY id LIMIT 1")[0]["id"]
        result = ep.call("drop_then_load", {"member_id": key})
        assert not result.is_error, result
        assert result.value == f"gone: {member.label} {key} not found", result
    finally:
        ep.close()


def test_a_world_registered_at_run_time_is_gone_when_the_block_ends(tmp_path):
    """`mcpsim.catalogue._loading.worlds_registered_here_removed` (what tests/conftest.py wraps every
    test module in): the world, its tasks and the loader's sources for child processes all go."""
    import yaml

    from mcpsim.catalogue import _loading as loading
    from mcpsim.catalogue._blueprints import blueprints, expand
    from mcpsim.world._registry import UnknownWorld, load_world, world_names

    spec = expand(blueprints()["library"], 1, name="blocklibrary").model_copy(update={"generated_tasks": 0})
    path = tmp_path / "blocklibrary.yaml"
    path.write_text(yaml.safe_dump(spec.model_dump(mode="json")))
    before = (world_names(), loading.loaded_worlds(), loading.loaded_sources())
    with loading.worlds_registered_here_removed():
        loading.register_spec(path)
        assert load_world("blocklibrary").name == "blocklibrary" and "blocklibrary" in loading.loaded_worlds()
    assert (world_names(), loading.loaded_worlds(), loading.loaded_sources()) == before
    with pytest.raises(UnknownWorld):
        load_world("blocklibrary")  # not from load_world's cache either
