"""CI smoke test of the benchmark suite: `benchmarks/run.py --quick` completes and writes
well-formed JSON and a markdown report with every section. Timings are never asserted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchmarks.report import SECTIONS as HEADINGS  # every heading the report writes
from tests.conftest import run_python

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "benchmarks" / "run.py"
SECTIONS = ["targets", "creation", "toolcalls", "grading", "e2e", "memory", "profiles", "research"]


@pytest.mark.slow
def test_quick_mode_writes_json_and_markdown(tmp_path: Path) -> None:
    out_json, out_md = tmp_path / "quick.json", tmp_path / "quick.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSIM_")}
    run_python(
        str(RUN), "--quick", "--json", str(out_json), "--markdown", str(out_md), env=env, cwd=tmp_path, timeout=600
    )

    report = json.loads(out_json.read_text())
    assert set(report) >= {"meta", "sections", "targets", "scaling", "skipped"}
    meta = report["meta"]
    assert meta["quick"] is True
    machine = meta["machine"]
    for key in ("cpu_model", "cores", "python", "sqlite"):
        assert machine[key]
    assert machine["versions"]["mcp"]
    skipped_sections = {s["section"] for s in report["skipped"]}
    for section in SECTIONS:
        assert section in report["sections"], section
        if section == "profiles" and "profiles" in skipped_sections:  # pyinstrument is optional
            continue
        assert report["sections"][section], f"section {section} is empty: {report['skipped']}"

    sections = report["sections"]
    assert {"inmemory", "stdio", "http"} <= set(sections["toolcalls"]["transports"])
    for transport in sections["toolcalls"]["transports"].values():
        variants = transport["variants"]
        assert {"noop", "calculate", "read_order", "write_address"} <= set(variants)
        for name, v in variants.items():
            assert v["n"] > 0 and v["median_ms"] > 0 and v["ratio_median"] is not None, name
            assert "error" not in v, (name, v.get("error"))
    assert any(row["world"] == "retail" and row["create"]["n"] > 0 for row in sections["creation"]["creation"])
    retail = sections["grading"]["worlds"]["retail"]
    assert retail["graded"] > 0 and not retail["failed"]
    runs = sections["e2e"]["runs"]
    assert {(r["backend"], r["concurrency"]) for r in runs} == {
        (b, c) for b in ("in-process", "http") for c in (1, 16, 64)
    }
    assert all(r["errors"] == 0 and r["pass_at_1"] == 1.0 for r in runs)
    assert sections["memory"]["probes"][0]["points"][0]["per_episode_bytes"] > 0
    issue = sections["targets"]  # every part ran; parked episodes came back with their state hash
    assert {"reads", "reset", "graded"} <= set(issue) and issue["reads"]["tools"] and issue["reset"]["rows"]
    assert all(r["errors"] == 0 and r["pass_at_1"] == 1.0 for r in issue["graded"]["runs"])
    idle = next(v for k, v in issue.items() if k.startswith("idle "))
    assert idle["parked"] > 0 and idle["same_hash"] == idle["sampled"] > 0
    research = sections["research"]  # issue 33: the corpus, its reset and its tools' costs, as ratios
    assert research["build"]["documents"] == research["corpus"][-1]["documents"] > 0
    assert research["reset"]["research_over_deserialize_cpu"] is not None
    calls = research["calls"]["variants"]
    assert {"search", "search_newest", "open", "find_in_page", "get_document_info", "calculate"} <= set(calls)
    for name, v in calls.items():
        assert v["n"] > 0 and v["noop_calls"] is not None and "error" not in v, (name, v.get("error"))
    assert research["summary"]["search_noop_calls"] > 0 and research["summary"]["search_over_read"] > 0
    assert {t["target"] for t in report["targets"]} >= {
        "episode creation < 1 ms median (default scale)",
        "grading < 5 ms median per task",
        "1,000 live episodes < 1 GB",
    }
    assert all(isinstance(t["met"], bool) for t in report["targets"])

    markdown = out_md.read_text()
    for heading in HEADINGS:
        assert f"### {heading}\n" in markdown, heading
    assert "<!-- benchmark results: start" in markdown and "<!-- benchmark results: end -->" in markdown
    assert "| CPU |" in markdown and "| SQLite |" in markdown
