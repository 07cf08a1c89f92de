"""The catalogue report's diversity figures (`mcpsim.catalogue._diversity`): worlds of one
blueprint share their action structure once names are stripped and worlds of different families
share little of it; renaming a world changes its names, never its structure; a repeated task is a
near duplicate and a different one is not; pairs of many worlds are sampled, the same for the same
seed; a run's report carries the figures, and a run resumed from results that predate them still
does."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from benchmarks import factory
from mcpsim.catalogue import _diversity
from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.catalogue._diversity import (
    near_duplicates,
    overlap,
    overlap_figures,
    record,
    task_keys,
    task_structure,
    tool_shapes,
    wording,
    world_structure,
)
from mcpsim.catalogue._run import WorldResult, run_catalogue, summarise, tool_signature
from mcpsim.specs._compiler import CompiledWorld, compile_spec
from mcpsim.tasks import Task


def _compiled(blueprint: str, seed: int, **changes: Any) -> CompiledWorld:
    bp = blueprints()[blueprint]
    return compile_spec(expand(bp.model_copy(update=changes) if changes else bp, seed, name=f"{blueprint}_x"))


def test_worlds_of_one_blueprint_overlap_more_than_worlds_of_two_families():
    hotel = [world_structure(_compiled("hotel", seed)) for seed in (0, 1)]
    library = world_structure(_compiled("library", 0))
    assert blueprints()["hotel"].family != blueprints()["library"].family
    same, across = overlap(hotel[0], hotel[1]), overlap(hotel[0], library)
    assert same > 0.6 and across < 0.5 and same > across + 0.2, (same, across)
    assert overlap(hotel[0], hotel[0]) == 1.0 and overlap(hotel[0], {}) == 0.0 and overlap({}, {}) == 0.0


def test_renaming_a_world_changes_its_names_never_its_structure():
    bp = blueprints()["hotel"]
    choices = {w: alts for w, alts in bp.vocabulary.items() if len(alts) > 1}
    assert choices
    first = {w: alts[:1] for w, alts in bp.vocabulary.items()}  # one word each: the same draws otherwise
    other = {w: alts[1:2] if w in choices else alts[:1] for w, alts in bp.vocabulary.items()}
    a, b = _compiled("hotel", 3, vocabulary=first), _compiled("hotel", 3, vocabulary=other)
    assert set(a.world.tools) != set(b.world.tools) and tool_signature(a.world) != tool_signature(b.world)
    assert world_structure(a) == world_structure(b)
    assert sorted(tool_shapes(a).values()) == sorted(tool_shapes(b).values())
    # a task of each world over the renamed tools has the same structure
    get_a = next(x.name for x in a.spec.actions if x.kind == "get")
    get_b = next(x.name for x in b.spec.actions if x.kind == "get")
    assert get_a != get_b
    assert task_structure(_task("t1", "Look it up.", [(get_a, {"x": "A1"})]), tool_shapes(a)) == task_structure(
        _task("t2", "Look it up.", [(get_b, {"y": "B2"})]), tool_shapes(b)
    )


def test_a_shape_leaves_out_names_and_values_but_not_what_a_tool_takes():
    compiled = _compiled("hotel", 0)
    shapes = tool_shapes(compiled)
    kinds = {a.kind: a.name for a in compiled.spec.actions}
    assert shapes[kinds["get"]] != shapes[kinds["create"]] != shapes[kinds["list"]]
    other = _compiled("hotel", 0, params={k: v[-1:] for k, v in blueprints()["hotel"].params.items()})
    first = _compiled("hotel", 0, params={k: v[:1] for k, v in blueprints()["hotel"].params.items()})
    assert world_structure(other) == world_structure(first)  # rule numbers are values


def _task(task_id: str, instruction: str, gold: list[tuple[str, dict[str, Any]]], knows: dict | None = None) -> Task:
    return Task.model_validate(
        {
            "id": task_id,
            "instruction": instruction,
            "user": {"knows": knows or {}},
            "gold": [{"tool": tool, "args": args} for tool, args in gold],
            "rubric": [
                {"type": "gold_state", "requirement": "The records are as the gold leaves them.", "noop_passes": False}
            ],
            "difficulty": "easy",
            "split": "train",
        }
    )


def test_wording_replaces_values_ids_quotes_and_names():
    task = _task(
        "t",
        'Hi, this is Jane Doe, guest GU000123. Please cancel my pending booking at "Blue Lagoon" '
        "for $120.50 on 2026-05-20. I'd like it done today.",
        [("cancel_booking", {"booking_id": "BK0042", "status": "pending"})],
        knows={"email": "jane@example.com"},
    )
    assert wording(task) == (
        "hi this is <name> guest <n> please cancel my <v> booking at <q> for <n> on <n> i'd like it done today"
    )


def test_a_repeated_task_is_a_near_duplicate_and_a_different_one_is_not():
    compiled = _compiled("hotel", 0)
    kinds = {a.kind: a.name for a in compiled.spec.actions}
    get, lister = kinds["get"], kinds["list"]
    tasks = [
        _task("a", "Hi, this is Jane Doe. Please look up record GU000123 for me.", [(get, {"x": "GU000123"})]),
        _task("b", "Hello, this is Sam Roe. Please look up record GU000999 for me.", [(get, {"x": "GU000999"})]),
        _task("c", "Hello, this is Sam Roe. How many of my open items are there, all told?", [(lister, {"x": "o"})]),
        # the same words as a and b, but another structure: not their duplicate
        _task("d", "Hi, this is Jane Doe. Please look up record GU000123 for me.", [(lister, {"x": "GU000123"})]),
        # the structure of a and b, two words apart from them: not a duplicate
        _task("e", "Good morning, this is Jane Doe. Please look up record GU000123 for me.", [(get, {"x": "GU1"})]),
    ]
    keys = task_keys(compiled, tasks)
    assert [k[0] for k in keys] == ["a", "b", "c", "d", "e"] and keys[0][1] == keys[1][1] != keys[3][1]
    found = near_duplicates([(k[0], k[1], k[2]) for k in keys])
    assert found == {"tasks": 5, "count": 2, "share": 0.4, "examples": [["a", "b"]]}


@pytest.mark.parametrize(
    ("one", "two", "near"),
    [
        ("a b c d", "a b c d", True),
        ("a b c d", "a b x d", True),  # one word replaced
        ("a b c d", "a b c d e", True),  # one added
        ("a b c d", "b c d", True),  # one removed
        ("a b c d", "a x y d", False),  # two replaced
        ("a b c d", "b a c d", False),  # two swapped: two edits
        ("a b c d", "a b", False),
        ("", "a", True),
        ("a b", "c d", False),
    ],
)
def test_near_identical_wording_is_one_word_edit_at_most(one, two, near):
    found = near_duplicates([("1", "s", one), ("2", "s", two)])
    assert found["count"] == (2 if near else 0)
    assert near_duplicates([("1", "s", one), ("2", "t", two)])["count"] == 0  # another structure


def test_every_task_with_a_near_duplicate_is_counted_once():
    # c is one word from x and one from y, which are two apart: all three are counted, once each
    tasks = [("y", "s", "a b f e"), ("x", "s", "a b c d"), ("c", "s", "a b c e"), ("z", "s", "a b c e")]
    found = near_duplicates(tasks)
    assert found["count"] == 4 and found["share"] == 1.0
    assert near_duplicates(tasks[:2])["count"] == 0


def test_near_duplicates_over_many_tasks_use_buckets_not_pairs():
    rng = random.Random(5)
    words = [f"w{i}" for i in range(50)]
    tasks = [(str(i), f"s{i % 7}", " ".join(rng.choices(words, k=25))) for i in range(4000)]
    tasks += [("copy", tasks[10][1], tasks[10][2]), ("edit", tasks[20][1], tasks[20][2] + " extra")]
    found = near_duplicates(tasks)
    assert found["count"] == 4 and found["examples"] == [["10", "copy"], ["20", "edit"]]
    assert near_duplicates(tasks) == found


def test_many_worlds_are_measured_on_sampled_pairs_the_same_for_a_seed(monkeypatch):
    monkeypatch.setattr(_diversity, "MAX_PAIRS", 40)
    worlds = [(f"f{i % 3}", {f"shape{i % 3}": 5, f"own{i}": 1, "common": 2}) for i in range(30)]
    figures = overlap_figures(worlds, seed=4)
    assert figures == overlap_figures(worlds, seed=4)
    assert figures["overlap_within_family"]["pairs"] == figures["overlap_across_families"]["pairs"] == 40
    assert figures["overlap_within_family"]["max"] == round(7 / 9, 3)  # equal but for one own shape each
    assert figures["overlap_across_families"]["max"] == round(2 / 14, 3)
    few = overlap_figures(worlds[:6], seed=4)  # 6 within pairs, 9 across: measured whole
    assert (few["overlap_within_family"]["pairs"], few["overlap_across_families"]["pairs"]) == (3, 12)


def test_the_report_summarises_the_accepted_worlds_structure_and_tasks():
    results = []
    for index, (blueprint, seed) in enumerate([("hotel", 0), ("hotel", 1), ("library", 0)]):
        compiled = _compiled(blueprint, seed)
        kind = "get" if blueprint == "hotel" else "list"  # a get tool has the same shape in every world
        get = next(a.name for a in compiled.spec.actions if a.kind == kind)
        result = WorldResult(index, f"{blueprint}_{index}", blueprint, seed, True, f"s{index}", tools=20, tasks=1)
        record(result, compiled, [_task("look", "Please look up record GU000123 for me.", [(get, {"x": "GU1"})])])
        results.append(result)
    results.append(WorldResult(3, "rejected_3", "hotel", 2, False, rejected_by=["tool_succeeds"]))
    diversity = summarise(results, seed=1, count=3).to_json()["diversity"]
    assert diversity["worlds"] == 3 and diversity["families"] == 2
    assert diversity["overlap_within_family"]["pairs"] == 1 and diversity["overlap_across_families"]["pairs"] == 2
    assert diversity["overlap_within_family"]["mean"] > diversity["overlap_across_families"]["max"]
    # both hotel tasks have one get of the same shape and the same words; the library's list differs
    assert diversity["near_duplicate_tasks"] == {
        "tasks": 3,
        "count": 2,
        "share": round(2 / 3, 4),
        "examples": [["hotel_0/look", "hotel_1/look"]],
    }


def test_a_run_reports_the_figures_and_a_resumed_old_run_still_does(tmp_path: Path):
    """Two worlds with the tool checks only (no tasks), through the factory benchmark (its result
    file keeps the report), then the same run resumed from a results.jsonl without the structure
    (as an earlier version wrote it): the figures come from the files the run wrote."""
    out, figures = tmp_path / "run", tmp_path / "factory.json"
    args = [
        "--count",
        "2",
        "--seed",
        "2",
        "--workers",
        "1",
        "--tasks",
        "0",
        "--out",
        str(out),
        "--result",
        str(figures),
    ]
    report = factory.main(args)["report"]
    diversity = report["diversity"]
    assert json.loads(figures.read_text())["report"]["diversity"] == diversity
    assert json.loads((out / "report.json").read_text())["diversity"] == diversity
    assert diversity["worlds"] == 2 and diversity["families"] == len(
        {blueprints()[b].family for b in report["blueprints"]}
    )
    pairs = diversity["overlap_within_family"]["pairs"] + diversity["overlap_across_families"]["pairs"]
    assert pairs == 1 and diversity["near_duplicate_tasks"]["tasks"] == 0
    results = out / "results.jsonl"
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert all(line["structure"] for line in lines if line["accepted"])
    old = [{k: v for k, v in line.items() if k not in ("structure", "task_keys")} for line in lines]
    results.write_text("".join(json.dumps(line) + "\n" for line in old))
    again = run_catalogue(out, 2, seed=2, workers=1, task_count=0, processes=False).to_json()
    assert again["resumed"] == len(lines) and again["diversity"] == diversity
