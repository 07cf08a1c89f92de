"""Drift: a twin records its server's name and version, and a newer listing of the server (a harvest
result, a recording, a newer twin) is compared with it: tools added, removed, and changed at which
JSON paths. `python -m mcpsim.twins drift` exits 1 on drift, 0 without, 2 on a listing it cannot
read. (tests/twins/test_listed_schemas.py checks a twin of each real server CI twins against a
fresh listing of that server: no drift.)"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mcpsim.twins import _limits as lim
from mcpsim.twins.__main__ import main as twins_main
from mcpsim.twins._drift import Listing, ListingError, read_listing, schema_drift, twin_listing
from mcpsim.twins._infer import infer_twin
from tests.twins.test_twin import SURFACE


def newer_tools() -> list[dict]:
    """The notes server's next version: a tool gone, one new, one argument's description and one
    output schema changed, one tool's schema only reordered."""
    tools = copy.deepcopy(SURFACE.tools)
    tools = [t for t in tools if t["name"] != "notes_sync"]
    read = next(t for t in tools if t["name"] == "notes_read_note")
    read["inputSchema"]["properties"]["title"]["description"] = "The title, exactly"
    read["inputSchema"]["additionalProperties"] = False
    delete = next(t for t in tools if t["name"] == "notes_delete_notes")
    del delete["outputSchema"]["properties"]["message"]
    search = next(t for t in tools if t["name"] == "notes_search_notes")
    search["inputSchema"] = dict(reversed(search["inputSchema"].items()))
    tools.append({"name": "notes_archive", "inputSchema": {"type": "object", "properties": {}}})
    return tools


def test_a_twin_records_the_servers_name_and_version():
    spec = infer_twin(SURFACE)
    assert (spec.server["name"], spec.server["version"]) == ("notes-server", "1.2.3")
    listing = twin_listing(spec)
    assert (listing.name, listing.version) == ("notes-server", "1.2.3")
    assert [t["inputSchema"] for t in listing.tools] == [t["inputSchema"] for t in SURFACE.tools]


def test_the_same_listing_does_not_drift():
    spec = infer_twin(SURFACE)
    report = schema_drift(spec, Listing("notes-server", "1.2.3", copy.deepcopy(SURFACE.tools)))
    assert report == {
        "server": {"name": "notes-server", "twinned": "1.2.3", "newer_name": "notes-server", "newer": "1.2.3"},
        "added": [],
        "removed": [],
        "changed": {},
        "unchanged": 7,
        "drifted": False,
    }


def test_a_newer_version_shows_every_change_and_where():
    report = schema_drift(infer_twin(SURFACE), Listing("notes-server", "1.3.0", newer_tools()))
    assert report["server"]["newer"] == "1.3.0" and report["drifted"]
    assert report["added"] == ["notes_archive"] and report["removed"] == ["notes_sync"]
    assert report["changed"] == {
        "notes_read_note": {
            "inputSchema": ["/additionalProperties added", "/properties/title/description added"],
        },
        "notes_delete_notes": {"outputSchema": ["/properties/message removed"]},
    }
    assert report["unchanged"] == 4  # reordered keys are the same schema


def test_listings_are_read_from_harvest_results_recordings_and_twins(tmp_path):
    spec = infer_twin(SURFACE)
    harvested = tmp_path / "harvested.json"
    harvested.write_text(
        json.dumps(
            {"outcome": "listed", "server_info": {"name": "notes-server", "version": "1.3.0"}, "tools": newer_tools()}
        )
    )
    recording = tmp_path / "recording"
    recording.mkdir()
    lines = [
        {"method": "initialize", "params": {}, "result": {"serverInfo": {"name": "notes-server", "version": "1.3.0"}}},
        {"method": "tools/list", "params": {}, "result": {"tools": newer_tools()}},
    ]
    (recording / "calls.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    twin = tmp_path / "twin.json"
    twin.write_text(spec.model_dump_json())
    from_harvest, from_recording = read_listing(harvested), read_listing(recording)
    assert from_harvest == from_recording and from_harvest.version == "1.3.0"
    assert schema_drift(spec, from_recording)["removed"] == ["notes_sync"]
    assert not schema_drift(spec, read_listing(twin))["drifted"]


def test_listings_are_untrusted(tmp_path):
    def refused(data: object, match: str) -> None:
        path = tmp_path / "bad.json"
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        with pytest.raises(ListingError, match=match):
            read_listing(path)

    refused("{not json", "not JSON")
    refused([1], "not a JSON object")
    refused({"outcome": "failed", "reason": "npm exited 1"}, "did not list this server .npm exited 1")
    refused({"tools": {"a": 1}}, "tools is not a list")
    refused({"tools": [{"inputSchema": {}}]}, r"tools\[0\] is not a tool with a name")
    refused({"tools": [{"name": "a", "inputSchema": []}]}, r"tools\[0\].inputSchema is not a JSON object")
    refused({"tools": [{"name": f"t{n}"} for n in range(lim.MAX_RECORDING_TOOLS + 1)]}, "the limit is")
    deep: object = {}
    for _ in range(lim.MAX_RECORDING_DEPTH + 1):
        deep = {"d": deep}
    refused({"tools": [{"name": "a", "inputSchema": deep}]}, "nested deeper")
    refused("[" * 100_000 + "]" * 100_000, "not JSON")  # past the parser's own recursion
    with pytest.raises(ListingError, match="without calls.jsonl"):
        read_listing(tmp_path)


def test_the_command_exits_1_on_drift(tmp_path: Path, capsys):
    spec = infer_twin(SURFACE)
    twin, same, newer = tmp_path / "twin.json", tmp_path / "same.json", tmp_path / "newer.json"
    twin.write_text(spec.model_dump_json())
    same.write_text(json.dumps({"server_info": {"name": "notes-server", "version": "1.2.3"}, "tools": SURFACE.tools}))
    newer.write_text(json.dumps({"server_info": {"name": "notes-server", "version": "1.3.0"}, "tools": newer_tools()}))
    assert twins_main(["drift", str(twin), str(same)]) == 0
    assert json.loads(capsys.readouterr().out)["drifted"] is False
    assert twins_main(["drift", str(twin), str(newer)]) == 1
    assert json.loads(capsys.readouterr().out)["added"] == ["notes_archive"]
    assert twins_main(["drift", str(twin), str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
