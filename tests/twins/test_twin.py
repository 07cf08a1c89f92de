"""Twins from a server's surface, without a third-party server: the inference of entities and
operations, verbatim input schemas (published as is, enforced with jsonschema), answers built
from the real output schemas, state that carries across calls, determinism."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from mcp import Client

from mcpsim.engine._episode import Episode
from mcpsim.runner._llm import ChatClient
from mcpsim.serve._app import serve_in_thread
from mcpsim.serve._mcp import build_server
from mcpsim.twins.__main__ import main as twins_main
from mcpsim.twins._infer import infer_twin
from mcpsim.twins._names import common_prefix, singular, words
from mcpsim.twins._refine import refine_with_model
from mcpsim.twins._schemas import schema_equal
from mcpsim.twins._surface import ServerSurface, read_surface
from mcpsim.twins._world import check_twin, compile_twin
from tests.support.fake_openai import FakeModel, fake_openai

pytestmark = pytest.mark.anyio

NOTE = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "The note's title", "minLength": 1},
        "body": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["title", "body"],
}
NOTES_OUT = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"notes": {"type": "array", "items": NOTE}},
    "required": ["notes"],
    "additionalProperties": False,
}


def tool(name: str, properties: dict, required: list[str], *, output: dict | None = None, read_only=False) -> dict:
    raw = {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": properties,
            "required": required,
        },
        "annotations": {"readOnlyHint": read_only},
    }
    if output is not None:
        raw["outputSchema"] = output
    return raw


SURFACE = ServerSurface(
    name="notes-server",
    version="1.2.3",
    instructions="",
    tools=[
        tool("notes_create_notes", {"notes": {"type": "array", "items": NOTE}}, ["notes"], output=NOTES_OUT),
        tool(
            "notes_add_tags",
            {
                "tags": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "noteTitle": {"type": "string"},
                            "values": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["noteTitle", "values"],
                    },
                }
            },
            ["tags"],
        ),
        tool("notes_read_note", {"title": {"type": "string"}}, ["title"], read_only=True),
        tool("notes_search_notes", {"query": {"type": "string"}}, ["query"], output=NOTES_OUT, read_only=True),
        tool(
            "notes_delete_notes",
            {"titles": {"type": "array", "items": {"type": "string"}}},
            ["titles"],
            output={
                "type": "object",
                "properties": {"success": {"type": "boolean"}, "message": {"type": "string"}},
                "required": ["success", "message"],
            },
        ),
        tool("notes_sync", {"force": {"type": "boolean", "default": False}}, []),
        tool(
            "notes_move_note",
            {"from": {"type": "string"}, "to": {"type": "string"}, "dry-run": {"type": "boolean"}},
            ["from", "to"],
        ),
    ],
)


def test_names_split_into_words_and_share_a_prefix():
    assert words("createEntities") == ["create", "entities"]
    assert words("git_diff-staged") == ["git", "diff", "staged"]
    assert common_prefix(["git_status", "git_log", "git_diff"]) == ["git"]
    assert common_prefix(["read_file", "write_file"]) == []
    assert singular("entities") == "entity" and singular("file") == "file"


def test_operations_and_entities_are_inferred_from_verbs_and_schemas():
    spec = infer_twin(SURFACE)
    ops = {t.name: t.operation for t in spec.tools}
    assert list(spec.entities) == ["note"]
    assert spec.entities["note"].key == ["title"]
    assert ops["notes_create_notes"].kind == "create" and ops["notes_create_notes"].items == "notes"
    assert ops["notes_add_tags"].model_dump(exclude_none=True) == {
        "kind": "append",
        "entity": "note",
        "items": "tags",
        "field": "tags",
        "ref": "noteTitle",
        "values": "values",
    }
    assert (ops["notes_read_note"].kind, ops["notes_read_note"].keys) == ("read", "title")
    assert (ops["notes_search_notes"].kind, ops["notes_search_notes"].query) == ("list", "query")
    assert (ops["notes_delete_notes"].kind, ops["notes_delete_notes"].keys) == ("delete", "titles")
    assert ops["notes_sync"].kind == "call"  # nothing in its name or schema says what it does
    assert ops["notes_move_note"].model_dump(exclude_none=True) == {
        "kind": "rename",
        "entity": "note",
        "keys": "from",
        "target": "to",
    }
    assert spec.name == "notes_server"


def test_schema_equality_is_equality_of_the_json_values():
    real = SURFACE.tools[0]["inputSchema"]
    assert schema_equal(real, dict(reversed(real.items())))  # key order aside
    assert not schema_equal(real, {k: v for k, v in real.items() if k != "$schema"})
    assert not schema_equal(real, {**real, "title": "notes_create_notesArguments"})
    assert not schema_equal(real, {**real, "additionalProperties": False})
    assert not schema_equal({"additionalProperties": True}, {"additionalProperties": 1})
    changed = copy.deepcopy(real)
    changed["properties"]["notes"]["items"]["properties"]["title"]["description"] = "other"
    assert not schema_equal(real, changed)
    assert not schema_equal(real, {**real, "required": []})


async def test_the_twin_publishes_the_real_schemas_and_keeps_state(templates):
    spec = infer_twin(SURFACE)
    world = compile_twin(spec)
    episode = Episode.create(world, 0, "default", templates=templates)
    async with Client(build_server(world, lambda _id: episode)) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for raw in SURFACE.tools:  # as the real server listed them: $schema and all, no title added
            published = listed[raw["name"]]
            assert published.input_schema == raw["inputSchema"]
            assert published.output_schema == raw.get("outputSchema")
        assert listed["notes_search_notes"].output_schema == NOTES_OUT

        note = {"title": "Groceries", "body": "milk and bread", "tags": ["home"]}
        created = await client.call_tool("notes_create_notes", {"notes": [note]})
        assert created.structured_content == {"notes": [note]}
        again = await client.call_tool("notes_create_notes", {"notes": [note]})
        assert again.structured_content == {"notes": []}  # already there: left alone
        await client.call_tool("notes_add_tags", {"tags": [{"noteTitle": "Groceries", "values": ["food", "home"]}]})
        found = await client.call_tool("notes_search_notes", {"query": "BREAD"})
        assert found.structured_content == {"notes": [note | {"tags": ["home", "food"]}]}
        read = await client.call_tool("notes_read_note", {"title": "Groceries"})
        assert json.loads(read.content[0].text) == {**note, "tags": ["home", "food"]}  # the record as text

        missing = await client.call_tool("notes_read_note", {"title": "Nope"})
        assert missing.is_error and "Note Nope not found" in missing.content[0].text
        bad = await client.call_tool("notes_create_notes", {"notes": [{"title": "", "body": "x"}]})
        assert bad.is_error and "should be non-empty" in bad.content[0].text  # the real schema's minLength
        before = episode.state_hash()
        wrong = await client.call_tool("notes_delete_notes", {"titles": "Groceries"})
        assert wrong.is_error and "is not of type 'array'" in wrong.content[0].text
        assert episode.state_hash() == before  # refused, nothing changed
        deleted = await client.call_tool("notes_delete_notes", {"titles": ["Groceries"]})
        assert deleted.structured_content == {"success": True, "message": "Groceries"}
        gone = await client.call_tool("notes_search_notes", {"query": "milk"})
        assert gone.structured_content == {"notes": []}

        await client.call_tool("notes_create_notes", {"notes": [note]})  # arguments named like keywords
        moved = await client.call_tool("notes_move_note", {"from": "Groceries", "to": "Shopping", "dry-run": False})
        assert not moved.is_error and moved.content[0].text == "Shopping"
        assert (await client.call_tool("notes_read_note", {"title": "Shopping"})).is_error is False
    episode.close()


async def test_every_tool_answers_within_the_real_output_schema():
    report = await check_twin(infer_twin(SURFACE), SURFACE.tools)
    assert (report["tools"], report["mirrored"], report["schemas_equal"], report["output_schemas_equal"]) == (7,) * 4
    assert report["answers_ok"] == 7, report["answers"]


def test_a_twin_is_deterministic(templates):
    spec = infer_twin(SURFACE)
    hashes = {Episode.create(compile_twin(spec), 3, "default", templates=templates).state_hash() for _ in range(2)}
    assert len(hashes) == 1
    other = Episode.create(compile_twin(spec), 4, "default", templates=templates).state_hash()
    assert other not in hashes  # the seed picks the synthetic data
    assert spec.digest() == infer_twin(SURFACE).digest()


async def test_a_twin_of_a_server_reached_over_http(templates):
    """`--from-mcp URL`: the twin served over streamable HTTP is read back into the same twin."""
    spec = infer_twin(SURFACE)
    world = compile_twin(spec)
    episode = Episode.create(world, 0, "default", templates=templates)
    app = build_server(world, lambda _id: episode).streamable_http_app(json_response=True, host="127.0.0.1")
    with serve_in_thread(app) as url:
        surface = await read_surface(f"{url}/mcp")
    again = infer_twin(surface)
    assert surface.name == "mcpsim-notes_server" and surface.resources[0]["uri"] == "mcpsim://notes_server/policy"
    assert [t.operation for t in again.tools] == [t.operation for t in spec.tools]
    assert all(schema_equal(a.input_schema, b.input_schema) for a, b in zip(again.tools, spec.tools, strict=True))
    with pytest.raises(ValueError, match="not an http"):
        await read_surface("ftp://example")
    episode.close()


async def test_a_model_reviews_the_operations_and_only_valid_answers_are_kept(tmp_path):
    spec = infer_twin(SURFACE)
    answer = {
        "operations": {
            "notes_read_note": {"kind": "list", "entity": "note", "query": "title"},  # valid: taken
            "notes_sync": {"kind": "call"},  # the same: confirmed
            "notes_delete_notes": {"kind": "delete", "entity": "note", "keys": "names"},  # no such argument
            "notes_search_notes": {"kind": "create", "entity": "note"},  # the server says it only reads
            "notes_add_tags": {"kind": "teleport"},  # no such kind
        }
    }
    model = FakeModel(script=[{"content": json.dumps(answer)}])
    with fake_openai(model) as url:
        chat = ChatClient(model="fake", base_url=url, temperature=0, retries=0)
        reviewed, report = await refine_with_model(spec, chat, cache_dir=tmp_path)
        again, cached = await refine_with_model(spec, chat, cache_dir=tmp_path)  # the reply is cached
        await chat.aclose()
    assert len(model.requests) == 1 and cached["cached"] and again == reviewed
    request = model.requests[0]
    assert request["response_format"]["json_schema"]["name"] == "twin_operations"
    assert '"proposed": {"kind": "read", "entity": "note", "keys": "title"}' in request["messages"][1]["content"]
    assert report["changed"] == {"notes_read_note": {"kind": "list", "entity": "note", "query": "title"}}
    assert report["confirmed"] == ["notes_sync"]
    assert report["refused"]["notes_delete_notes"] == "keys: notes_delete_notes has no argument 'names'"
    assert "read-only" in report["refused"]["notes_search_notes"]
    assert "notes_add_tags" in report["refused"]
    assert reviewed.tool("notes_read_note").operation.kind == "list"
    assert reviewed.tool("notes_delete_notes").operation == spec.tool("notes_delete_notes").operation


def test_the_published_twin_schema_is_generated_from_the_models(capsys):
    """schemas/twin-spec.schema.json is `TwinSpec`'s schema, as `python -m mcpsim.twins schema` prints
    it, and a twin spec validates against it."""
    import jsonschema

    root = Path(__file__).parents[2]
    published = json.loads((root / "schemas" / "twin-spec.schema.json").read_text())
    assert twins_main(["schema"]) == 0
    assert published == json.loads(capsys.readouterr().out), (
        "run: python -m mcpsim.twins schema > schemas/twin-spec.schema.json"
    )
    validator = jsonschema.Draft202012Validator(published)
    validator.validate(json.loads(infer_twin(SURFACE).model_dump_json()))
    broken = json.loads(infer_twin(SURFACE).model_dump_json()) | {"kind": "world"}
    assert not validator.is_valid(broken)
