"""Twins from the harvest (`python -m mcpsim.twins build`): committed harvest results, copied into a
folder of their own with a malformed and an oversized result beside them, become twin worlds
offline. An accepted twin lists every recorded schema verbatim when served over stdio, its task
file loads with `--world-spec`, the report's totals add up, each bad result is its own server's
failure, and the same input gives the same bytes."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mcpsim.twins import _catalogue
from mcpsim.twins.__main__ import main as twins_main
from mcpsim.twins._probe import ProbeLimits, probe_server
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv

ROOT = Path(__file__).resolve().parents[2]
HARVEST = ROOT / "benchmarks" / "harvest" / "results"
MEMORY = "npm-modelcontextprotocol-server-memory"  # accepted: its tools write records
TIME = "pypi-mcp-server-time"  # rejected: two tools whose effect the twin cannot read, so no task
GITLAB = "npm-modelcontextprotocol-server-gitlab"  # rejected: it listed schemas MCP cannot list
LIMITS = ProbeLimits(cpu_s=300, wall_s=300.0, memory_bytes=8 * 1024**3)  # generous: a loaded 2-core machine


def _results(folder: Path) -> Path:
    """Three committed results, a malformed one and an oversized one, with an index naming them."""
    folder.mkdir()
    committed = json.loads((HARVEST / "index.json").read_text(encoding="utf-8"))
    rows = [r for r in committed["results"] if r["file"].removesuffix(".json") in (MEMORY, TIME, GITLAB)]
    for row in rows:
        shutil.copy(HARVEST / row["file"], folder / row["file"])
    (folder / "npm-broken.json").write_text('{"outcome": "listed", "tools": [', encoding="utf-8")
    with (folder / "npm-huge.json").open("w", encoding="utf-8") as out:
        out.write('{"outcome": "listed", "tools": [], "padding": "')
        out.write("x" * _catalogue.MAX_RESULT_BYTES)
        out.write('"}')
    rows += [
        {"file": "npm-broken.json", "package": "broken", "registry": "npm", "outcome": "listed", "tool_count": 1},
        {"file": "npm-huge.json", "package": "huge", "registry": "npm", "outcome": "listed", "tool_count": 0},
        {"file": "../escape.json", "package": "escape", "registry": "npm", "outcome": "listed", "tool_count": 0},
        {"file": "npm-failed.json", "package": "failed", "registry": "npm", "outcome": "failed"},
    ]
    (folder / "index.json").write_text(json.dumps({"results": rows}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("catalogue")
    results = _results(root / "results")
    assert twins_main(["build", str(results), "--out", str(root / "twins"), "--tasks", "3"]) == 0
    report = json.loads((root / "twins" / "report.json").read_text(encoding="utf-8"))
    return root, results, report


def _canonical(schema: object) -> str:
    return json.dumps(schema, sort_keys=True)


def _entry(report: dict, name: str) -> dict:
    return next(e for e in report["servers"] if e["name"] == name)


def test_the_report_adds_up(built):
    _, _, report = built
    assert [e["name"] for e in report["servers"]] == sorted(
        ["index-row-5", "npm-broken", "npm-huge", GITLAB, MEMORY, TIME]
    )
    assert report["totals"] == {
        "servers": 6,
        "tools": 9 + 2 + 9,
        "schemas_equal": 9 + 2,
        "accepted": 1,
        "accepted_tools": 9,
        "rejected": 5,
        "rejected_by_check": {"read": 3, "schemas": 1, "tasks": 1},
        "tasks_kept": 3,
    }
    memory = _entry(report, MEMORY)
    assert memory["outcome"] == "accepted" and "rejected_by" not in memory
    assert (memory["server"], memory["world"]) == ({"name": "memory-server", "version": "0.6.3"}, "memory_server")
    assert memory["tools"] == memory["schemas_equal"] == memory["answers_ok"] == 9
    assert memory["tasks"] == {"asked": 3, "kept": 3, "candidates_dropped": {}, "failures": {}}
    time = _entry(report, TIME)
    assert (time["outcome"], time["rejected_by"], time["operations"]) == ("rejected", ["tasks"], {"call": 2})
    assert time["tasks"]["kept"] == 0 and "tasks_generated" in time["tasks"]["failures"]


def test_each_bad_result_is_its_own_servers_failure(built):
    root, _, report = built
    broken, huge, escape = (_entry(report, n) for n in ("npm-broken", "npm-huge", "index-row-5"))
    assert broken["rejected_by"] == ["read"] and broken["reason"].startswith("npm-broken.json: not JSON")
    limit = f"{_catalogue.MAX_RESULT_BYTES:,}"
    assert huge["rejected_by"] == ["read"] and huge["reason"].endswith(f"bytes, the limit is {limit}")
    assert escape["reason"] == "index.json results[5] names no result file"
    gitlab = _entry(report, GITLAB)
    assert gitlab["rejected_by"] == ["schemas"] and gitlab["schemas_equal"] == 0
    assert "no `type: object` at the root" in gitlab["reason"] and len(gitlab["schema_differs"]) == 9
    assert str(root) not in json.dumps(report)  # file names, not this machine's paths
    written = sorted(str(p.relative_to(root / "twins")) for p in (root / "twins").rglob("*") if p.is_file())
    assert written == [
        "rejected/pypi-mcp-server-time.twin.json",
        "report.json",
        f"worlds/{MEMORY}.twin.json",
        f"worlds/{MEMORY}.twin.tasks.yaml",
    ]


@pytest.mark.system
def test_an_accepted_twin_serves_the_recorded_schemas_and_its_tasks_load(built):
    root, results, _ = built
    twin = root / "twins" / "worlds" / f"{MEMORY}.twin.json"
    recorded = {t["name"]: t for t in json.loads((results / f"{MEMORY}.json").read_text())["tools"]}
    probe = probe_server(mcpsim_argv("gen", "--serve", str(twin)), env=CLEAN_ENV, cwd=root, limits=LIMITS, isolate=[])
    assert probe.failure is None, (probe.failure, probe.stderr)
    served = {t["name"]: t for t in probe.tools}
    assert sorted(served) == sorted(recorded)
    for name, tool in recorded.items():
        for part in ("inputSchema", "outputSchema"):
            assert _canonical(served[name].get(part)) == _canonical(tool.get(part)), (name, part)
    listed = subprocess.run(
        mcpsim_argv("tasks", "memory_server", "--world-spec", str(twin), "--json"),
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
        timeout=600,
    )
    assert listed.returncode == 0, listed.stderr
    tasks = (root / "twins" / "worlds" / f"{MEMORY}.twin.tasks.yaml").read_text()
    ids = [t["id"] for t in json.loads(listed.stdout)]
    assert len(ids) == 3 and all(f"id: {i}" in tasks for i in ids)


def test_the_same_input_gives_the_same_bytes_and_only_rebuilds_one(built, tmp_path):
    root, results, report = built
    again = tmp_path / "again"
    _catalogue.build_catalogue(results, again, tasks=3, say=lambda _: None)
    first = {p.relative_to(root / "twins"): p.read_bytes() for p in (root / "twins").rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first == second
    # --only rebuilds that package's twin and keeps the others' entries of the earlier report
    (again / "worlds" / f"{MEMORY}.twin.json").unlink()
    assert twins_main(["build", str(results), "--out", str(again), "--tasks", "3", "--only", "mcp-server-time"]) == 0
    assert json.loads((again / "report.json").read_text()) == report
    assert not (again / "worlds" / f"{MEMORY}.twin.json").exists()


def test_an_index_that_cannot_be_read_is_refused(tmp_path, capsys):
    (tmp_path / "index.json").write_text("[1, 2", encoding="utf-8")
    assert twins_main(["build", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "index.json: not JSON" in capsys.readouterr().err


def test_the_docs_give_the_committed_reports_totals():
    totals = json.loads((ROOT / "benchmarks" / "harvest" / "twins" / "report.json").read_text())["totals"]
    rejected = ", ".join(f"{check} {n}" for check, n in totals["rejected_by_check"].items())
    said = (
        f"{totals['servers']} servers, {totals['tools']} tools ({totals['schemas_equal']} with every schema equal "
        f"when served), {totals['accepted']} accepted ({totals['accepted_tools']} tools, {totals['tasks_kept']} "
        f"tasks), {totals['rejected']} rejected ({rejected})."
    )
    page = (ROOT / "docs" / "twins.md").read_text().split("<!-- twins:catalogue -->", 1)[1]
    assert said in " ".join(page.split())


def test_a_servers_instructions_become_its_twins_description():
    everything = _catalogue.Harvested("npm-modelcontextprotocol-server-everything.json", "x", "npm", "2026.8.31")
    surface = _catalogue._surface(everything, HARVEST)
    assert surface.instructions.startswith("# Everything Server") and len(surface.tools) == 13
    assert surface.source == "harvest npm:x@2026.8.31"


def test_twins_of_servers_with_one_name_get_distinct_worlds_and_a_build_error_is_reported(tmp_path, monkeypatch):
    results = tmp_path / "results"
    results.mkdir()
    rows = []
    for file, package in (("pypi-a.json", "a"), ("pypi-b.json", "b"), ("pypi-c.json", "c")):
        shutil.copy(HARVEST / f"{TIME}.json", results / file)  # three servers that all call themselves mcp-time
        rows.append({"file": file, "package": package, "registry": "pypi", "outcome": "listed"})
    (results / "index.json").write_text(json.dumps({"results": rows}), encoding="utf-8")
    inferred = _catalogue.infer_twin

    def infer(surface):  # the third server's inference fails the way an event loop reports it
        if surface.source.startswith("harvest pypi:c"):
            raise ExceptionGroup("unhandled errors in a TaskGroup", [KeyError("type")])
        return inferred(surface)

    monkeypatch.setattr(_catalogue, "infer_twin", infer)
    report = _catalogue.build_catalogue(results, tmp_path / "out", tasks=1, say=lambda _: None)
    a, b, c = report["servers"]
    assert (a["world"], b["world"]) == ("mcp_time", f"mcp_time_{hashlib.sha256(b'pypi-b').hexdigest()[:8]}")
    assert (c["rejected_by"], c["reason"], c["tools"]) == (["build"], "KeyError: 'type'", 2)
