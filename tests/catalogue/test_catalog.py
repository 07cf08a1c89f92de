"""The blueprint catalogue: at least 40 blueprints whose knobs expand (seeded) into distinct specs
that compile to worlds of at least 20 tools, and the catalogue run: a CI sample of 20 worlds
generated and validated by every check (their tasks' and the process check included) in a process
pool, counted, written and reported; duplicates and rejected worlds counted and never written; a
run started again resumes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mcpsim.acceptance._validate import CRITERIA
from mcpsim.catalogue._blueprints import MIN_TOOLS, BlueprintError, blueprints, catalogue_specs, expand
from mcpsim.catalogue._loading import spec_files
from mcpsim.catalogue._run import DISTINCT, REPORT_CRITERIA, WorldResult, run_catalogue, summarise, tool_signature
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import load_spec
from mcpsim.tasks._task import TaskFile
from tests.conftest import CLEAN_ENV

SAMPLE = 20
SAMPLE_TASKS = 2  # per world: every task check runs on 40 tasks, at about 5 CPU-s a world


def test_the_catalogue_has_forty_blueprints_each_with_knobs():
    found = blueprints()
    assert len(found) >= 40
    assert len({bp.family for bp in found.values()}) >= 10
    for bp in found.values():
        knobs = bp.knobs()
        assert knobs["optional_tools"], bp.name
        assert knobs["params"], bp.name
        assert knobs["vocabulary"] or bp.family == bp.name or knobs["optional_entities"], bp.name


def test_the_docs_list_every_family_and_blueprint():
    text = (Path(__file__).parents[2] / "docs" / "catalogue.md").read_text()
    table = text.split("| family | its domains (blueprints) |", 1)[1].split("\n\n", 1)[0]
    listed = {
        m.group(1): sorted(d.strip() for d in m.group(2).split(","))
        for m in re.finditer(r"^\| ([a-z_]+) \| ([a-z_, ]+) \|$", table, re.M)
    }
    families: dict[str, list[str]] = {}
    for bp in blueprints().values():
        families.setdefault(bp.family, []).append(bp.name)
    assert listed == {f: sorted(names) for f, names in families.items()}
    assert f"{len(families)} families and\n{len(blueprints())} blueprints" in text


@pytest.mark.parametrize("name", sorted(blueprints()))
def test_every_blueprint_expands_into_distinct_worlds_of_twenty_tools(name):
    bp = blueprints()[name]
    signatures = set()
    for seed in range(3):
        spec = expand(bp, seed, name=f"{name}_{seed}")
        assert spec == expand(bp, seed, name=f"{name}_{seed}")  # seeded: the same spec again
        world = compile_spec(spec).world
        assert len(world.tools) >= MIN_TOOLS
        signatures.add(tool_signature(world))
    assert len(signatures) >= 2, f"{name}: three seeds gave {len(signatures)} tool set(s)"


def test_vocabulary_renames_every_identifier_and_text():
    bp = blueprints()["hotel"]
    spec = next(s for seed in range(50) if "visitor" in (s := expand(bp, seed)).entities)
    text = json.dumps(spec.model_dump(mode="json"))
    assert not re.search(r"(?<![A-Za-z])[Cc]ustomers?(?![a-z])", text)
    assert "get_visitor" in {a.name for a in spec.actions}
    assert spec.entities["stay" if "stay" in spec.entities else "reservation"].fields["visitor_id"].entity == "visitor"
    assert " a visitor" in text and " an visitor" not in text


def test_params_are_substituted_with_their_type_and_in_dollars():
    bp = blueprints()["library"]
    spec = next(s for seed in range(50) if "book" in (s := expand(bp, seed)).entities)
    lend = next(a for a in spec.actions if a.name == "lend_book")
    limit = next(p for p in lend.preconditions if p.name == "too_many_loans").require.right
    assert isinstance(limit, int) and limit in bp.params["max_loans"]
    assert f"at most {limit} open loans" in lend.description
    lost = next(a for a in spec.actions if a.name == "report_lost")
    fee = lost.effects[0].subtract
    assert f"${fee / 100:.2f}" in lost.description


def test_a_broken_blueprint_is_refused_with_its_name():
    bp = blueprints()["hotel"].model_copy(update={"params": {}})
    with pytest.raises(BlueprintError, match="hotel"):
        expand(bp, 0)
    bad = blueprints()["hotel"].model_copy(update={"actions": [{"name": "x", "kind": "nope", "entity": "booking"}]})
    with pytest.raises(BlueprintError, match="blueprint hotel"):
        expand(bad, 0)


def test_a_run_draws_the_blueprints_in_turn_with_names_and_seeds_of_its_own():
    drawn = list(catalogue_specs(len(blueprints()) + 1, seed=5))
    names = [d[1] for d in drawn]
    assert names[: len(blueprints())] == sorted(blueprints()) and names[-1] == names[0]
    assert [d[3].name for d in drawn[:2]] == [f"{names[0]}_00000", f"{names[1]}_00001"]
    assert list(catalogue_specs(3, seed=5))[2][3] == drawn[2][3]
    assert list(catalogue_specs(3, seed=6))[2][3] != drawn[2][3]


def test_the_report_counts_rejections_per_criterion_and_keeps_the_first_worlds_by_index():
    results = [
        WorldResult(0, "a_0", "a", 1, True, "s0", tools=21, tasks=10, task_lengths=[1, 2]),
        WorldResult(1, "b_1", "b", 2, False, "s1", rejected_by=["tool_succeeds", "gold_passes_twice"]),
        WorldResult(2, "c_2", "c", 3, False, "s0", rejected_by=[DISTINCT]),
        WorldResult(3, "d_3", "d", 4, True, "s3", tools=25, tasks=10, task_lengths=[3]),
        WorldResult(4, "e_4", "e", 5, True, "s4", tools=30, tasks=10, task_lengths=[1]),
    ]
    report = summarise(results, seed=9, count=2)
    assert (report.worlds, report.tools, report.tasks, report.drawn, report.rejected) == (2, 46, 20, 4, 2)
    assert set(report.rejections_per_criterion) == set(REPORT_CRITERIA)
    assert {k: v for k, v in report.rejections_per_criterion.items() if v} == {
        "tool_succeeds": 1,
        "gold_passes_twice": 1,
        DISTINCT: 1,
    }
    assert report.task_lengths == {"min": 1, "mean": 2.0, "max": 3, "histogram": {"1": 1, "2": 1, "3": 1}}
    assert report.distinct_tool_sets == 2 and report.blueprints == {"a": 1, "d": 1}


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[Path, dict]:
    """The CI sample: 20 catalogue worlds generated and validated by every check (every tool
    succeeds, every refusal is met and changes nothing, seed data keeps its constraints, their
    tasks pass the audit, another process builds the same template and tasks) in a pool of two
    processes, each with its process checker."""
    out = tmp_path_factory.mktemp("catalogue")
    seen: list[WorldResult] = []
    report = run_catalogue(
        out, SAMPLE, seed=11, workers=2, task_count=SAMPLE_TASKS, progress=lambda r, _n: seen.append(r)
    )
    return out, report.to_json() | {"progress": [r.index for r in seen]}


def test_the_ci_sample_writes_twenty_distinct_validated_worlds(sample):
    out, report = sample
    assert report["worlds"] == SAMPLE and report["distinct_tool_sets"] == SAMPLE
    assert report["tools"] >= MIN_TOOLS * SAMPLE and report["tools_per_world"]["min"] >= MIN_TOOLS
    assert report["drawn"] == SAMPLE + report["rejected"]
    assert report["runs_per_criterion"] == dict.fromkeys(CRITERIA, SAMPLE)  # every check ran on every accepted world
    assert (
        report["tasks"] == SAMPLE * SAMPLE_TASKS
        and sum(report["task_lengths"]["histogram"].values()) == report["tasks"]
    )
    assert report["task_lengths"]["min"] >= 1
    assert sum(report["rejections_per_criterion"].values()) >= report["rejected"]
    assert sum(report["blueprints"].values()) == SAMPLE and len(report["blueprints"]) >= SAMPLE // 2
    assert json.loads((out / "report.json").read_text()) == {k: v for k, v in report.items() if k != "progress"}
    written = spec_files(out / "worlds")
    assert len(written) == SAMPLE and len(list((out / "tasks").glob("*.yaml"))) == SAMPLE
    kinds = set()
    for path in (out / "tasks").glob("*.yaml"):
        tasks = TaskFile.model_validate(yaml.safe_load(path.read_text())).tasks
        assert len(tasks) == SAMPLE_TASKS and all(t.gold and t.rubric for t in tasks)
        kinds |= {t.tags[0] for t in tasks}
    # the composed and dialogue kinds take most turns (`TURNS`), so a few tasks a world show both
    composed, dialogue = {"errand", "triage", "sweep", "pick", "tally", "branch"}, {"ask", "change", "decline"}
    assert kinds & composed and kinds & dialogue and len(kinds) >= 4, kinds
    worlds = [compile_spec(load_spec(p)).world for p in written]
    assert len({tool_signature(w) for w in worlds}) == SAMPLE
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == report["drawn"] and sorted(report["progress"]) == sorted(r["index"] for r in lines)
    rejected = [r for r in lines if not r["accepted"]]
    assert all(r["rejected_by"] and r["reasons"] for r in rejected)
    assert not any((out / "worlds" / f"{r['name']}.yaml").exists() for r in rejected)


def test_a_run_started_again_resumes_from_its_results(sample, tmp_path):
    out, report = sample
    again = run_catalogue(out, SAMPLE, seed=11, workers=1, task_count=SAMPLE_TASKS)
    assert again.resumed == report["drawn"] and again.worlds == SAMPLE
    assert {k: v for k, v in again.to_json().items() if k not in ("seconds", "resumed", "workers")} == {
        k: v for k, v in report.items() if k not in ("seconds", "resumed", "workers", "progress")
    }


def mcpsim(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """`mcpsim ARGS` in a fresh process, its output captured."""
    command = [sys.executable, "-m", "mcpsim", *args]
    return subprocess.run(command, capture_output=True, text=True, env=CLEAN_ENV, timeout=timeout, check=False)


def test_gen_catalog_writes_worlds_with_validated_tasks_that_the_worlds_dir_loads(tmp_path):
    """A world through every check, the tasks' included (the full catalogue's command)."""
    out = tmp_path / "run"
    done = mcpsim("gen", "--catalog", "--count", "1", "--seed", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["worlds"] == 1 and report["tasks"] >= 10 and report["task_lengths"]["max"] >= 2
    assert f"{report['worlds']} worlds, {report['tools']} tools, {report['tasks']} tasks" in done.stderr
    world = sorted(p.stem for p in (out / "worlds").glob("*.yaml"))[0]
    tasks = TaskFile.model_validate(yaml.safe_load((out / "tasks" / f"{world}.yaml").read_text()))
    assert len(tasks.tasks) >= 10 and tasks.world == world
    listed = mcpsim("tasks", "--json", "--worlds-dir", str(out / "worlds"), world, timeout=600)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert all(t.id in listed.stdout for t in tasks.tasks)


def test_gen_catalog_refuses_a_spec_argument_and_needs_out():
    done = mcpsim("gen", "--catalog", "--count", "2", timeout=300)
    assert done.returncode == 2 and "--catalog takes no SPEC and needs --out DIR" in done.stderr
