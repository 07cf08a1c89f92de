"""Structural diversity of a catalogue run (docs/catalogue.md, "The report"): how much action
structure its worlds share once names are stripped, and how many of its tasks are near duplicates.

Definitions (every one deterministic: no wall clock, no global random state, no `hash()` of text):

- A tool's *shape* is what it does and takes, with every name, description and value left out:
  its kind (`get`, `list`, `search`, `create`, `update`, `transition`, `transfer`, `delete`, or
  `builtin` for a tool no action declares, such as `calculate`), its flags (read-only, destructive,
  irreversible, can fail part-way), its parameters as a sorted list of (JSON types, enum size,
  required, bounded, patterned, item types), and for a spec action: whether it moves a state
  machine, its preconditions as sorted (operator, left operand kind, right operand kind), its
  effects as sorted (add/subtract/set, operand kind, on its own row or another) and the kinds of
  the operands it sets. Operand kinds: `arg`, `field`, `clock`, `count`, `literal:<type>`. The
  shape is written as a 12-hex digest (`tool_shapes`).
- A world's *structure* is the multiset of its tools' shapes (`world_structure`). Renaming a
  world's vocabulary or drawing other rule parameters leaves it unchanged.
- The *overlap* of two worlds is the weighted Jaccard index of their structures: the sum over
  shapes of the smaller count divided by the sum of the larger count (`overlap`; 1.0 for equal
  structures, 0.0 for none shared). The report gives the mean and max over pairs of worlds of the
  same blueprint family and over pairs of different families. A class with at most `MAX_PAIRS`
  pairs is measured whole; a larger one on `MAX_PAIRS` pairs drawn (with replacement, uniformly
  over the class) by a `Random` seeded from the run's seed (`overlap_figures`).
- A task's *structure* is its gold calls in order, each as (tool shape, expected outcome, the
  sorted JSON types of its argument values): names and literal values stripped (`task_structure`).
- A task's *wording* is its instruction with values replaced by placeholders, in this order:
  quoted text -> `<q>`; every string of at least 3 characters that the gold calls pass or the
  user knows (found case-insensitively as a whole phrase) -> `<v>`; every token with a digit (ids,
  numbers, amounts, dates) -> `<n>`; every run of capitalised words (record and person names)
  -> `<name>`, except a single word opening a sentence and the pronoun `I`; then lower-cased and
  split into words (punctuation dropped), at most `MAX_WORDS` of them (`wording`).
- Two tasks are *near duplicates* when their structures are equal and their wordings differ by at
  most one word replaced, inserted or deleted (word-level edit distance at most 1). A task is
  counted when at least one other task of the run is its near duplicate (`near_duplicates`). It
  is found with hash buckets, never by comparing pairs: tasks are grouped by structure, and each
  wording of n words puts 2n + 1 keys in its group's bucket table: its n + 1 splits (the words
  before position k, the words from k on) and its n one-word deletions (the words before i, the
  words after i). Two wordings share a key exactly when they are within one edit (a split meets a
  split: equal; a split meets a deletion: one word inserted; two deletions at the same place: one
  word replaced), so the work is linear in the number of words.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from mcpsim.catalogue._blueprints import BlueprintError, blueprints
from mcpsim.specs import CompiledWorld, compile_spec, load_spec
from mcpsim.tasks import Task, TaskFile
from mcpsim.world import derive_seed

if TYPE_CHECKING:
    from mcpsim.specs import ActionSpec

MAX_PAIRS = 5000  # pairs of worlds measured per class (within a family, across families)
MAX_WORDS = 120  # words of an instruction compared
MIN_VALUE = 3  # shortest argument value replaced in an instruction


class WorldResult(Protocol):
    """What this module reads and writes of a run's result (`mcpsim.catalogue._run.WorldResult`)."""

    name: str
    blueprint: str
    accepted: bool
    structure: dict[str, int]
    task_keys: list[list[str]]


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


# -- the shape of a tool ------------------------------------------------------------------------


def _operand(value: Any) -> str:
    """The kind of a spec operand (`mcpsim.specs._spec`): never its name or value."""
    if isinstance(value, str):
        if value.startswith("args."):
            return "arg"
        return "clock" if value in ("now", "today") else "field"
    if isinstance(value, dict):
        return "count" if "count" in value else "literal:str"
    if isinstance(value, bool):
        return "literal:bool"
    if isinstance(value, int | float):
        return "literal:number"
    return "literal:list" if isinstance(value, list) else "literal:none"


def _parameter(schema: Mapping[str, Any], definitions: Mapping[str, Any], required: bool) -> list[Any]:
    variants = [schema, *schema.get("anyOf", [])]
    variants = [definitions.get(str(v.get("$ref", "")).rsplit("/", 1)[-1], v) for v in variants]
    types = sorted({str(v["type"]) for v in variants if "type" in v and v["type"] != "null"})
    enum = max((len(v["enum"]) for v in variants if "enum" in v), default=0)
    bounded = any(k in v for v in variants for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"))
    patterned = any("pattern" in v or "format" in v for v in variants)
    items = sorted(str(v["items"].get("type")) for v in variants if isinstance(v.get("items"), dict))
    return [types, enum, required, bounded, patterned, items]


def _action_shape(action: ActionSpec) -> dict[str, Any]:
    conditions = [[p.require.op, _operand(p.require.left), _operand(p.require.right)] for p in action.preconditions]
    effects = []
    for effect in action.effects:
        how = next(k for k in ("add", "subtract", "set") if getattr(effect, k) is not None)
        target = "own" if effect.row == action.entity else "other"
        effects.append([how, _operand(getattr(effect, how)), target])
    return {
        "kind": action.kind,
        "moves": action.to is not None,
        "preconditions": sorted(conditions),
        "effects": sorted(effects),
        "sets": sorted(_operand(v) for v in action.set.values()),
        "partial_failure": action.partial_failure is not None,
    }


def tool_shapes(compiled: CompiledWorld) -> dict[str, str]:
    """Each tool's name -> the digest of its shape (module docstring)."""
    actions = {a.name: a for a in compiled.spec.actions}
    shapes: dict[str, str] = {}
    for name, tool in compiled.world.tools.items():
        schema = tool.input_schema()
        required = set(schema.get("required", []))
        definitions = schema.get("$defs", {})
        parameters = sorted(_parameter(p, definitions, n in required) for n, p in schema.get("properties", {}).items())
        action = actions.get(name)
        shape: dict[str, Any] = _action_shape(action) if action is not None else {"kind": "builtin"}
        shape |= {
            "parameters": parameters,
            "flags": [tool.read_only, tool.destructive, tool.irreversible, tool.partial_failures],
        }
        shapes[name] = _digest(shape)
    return shapes


def world_structure(compiled: CompiledWorld) -> dict[str, int]:
    """The multiset of the world's tool shapes: shape digest -> how many tools have it."""
    return dict(sorted(Counter(tool_shapes(compiled).values()).items()))


def overlap(a: Mapping[str, int], b: Mapping[str, int]) -> float:
    """The weighted Jaccard index of two structures (0.0 when both are empty)."""
    keys = set(a) | set(b)
    larger = sum(max(a.get(k, 0), b.get(k, 0)) for k in keys)
    return sum(min(a.get(k, 0), b.get(k, 0)) for k in keys) / larger if larger else 0.0


# -- tasks --------------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def task_structure(task: Task, shapes: Mapping[str, str]) -> str:
    """The digest of the task's gold calls in order, names and values stripped."""
    calls = [[shapes.get(a.tool, "unknown"), a.expect, sorted(_kind(v) for v in a.args.values())] for a in task.gold]
    return _digest(calls)


_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?<!\w)'[^'\n]+'(?!\w)")
_NUMBER = re.compile(r"[$#]?\w*\d[\w/:.,-]*")
_CAPITALISED = re.compile(r"(?<![\w'])[A-Z][\w'-]*(?:[ \t]+[A-Z][\w'-]*)*")
_WORD = re.compile(r"<[a-z]+>|[a-z]+(?:'[a-z]+)?")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _name_or_word(match: re.Match[str]) -> str:
    run = match.group(0)
    before = match.string[: match.start()].rstrip(" \t\"'(")
    opening = not before or before[-1] in ".!?:\n"
    if (opening and not re.search(r"\s", run)) or run == "I" or run.startswith("I'"):
        return run
    return " <name> "


def wording(task: Task) -> str:
    """The task's instruction with values replaced by placeholders (module docstring), as words."""
    text = _QUOTED.sub(" <q> ", task.instruction)
    values = {v.strip() for v in _strings([a.args for a in task.gold]) if len(v.strip()) >= MIN_VALUE}
    values |= {v.strip() for v in _strings(task.user.knows) if len(v.strip()) >= MIN_VALUE}
    for value in sorted(values, key=lambda v: (-len(v), v)):
        text = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", " <v> ", text, flags=re.IGNORECASE)
    text = _NUMBER.sub(lambda m: " <n> " + (m.group(0)[-1] if m.group(0)[-1] in ".,:" else ""), text)
    text = _CAPITALISED.sub(_name_or_word, text)
    return " ".join(_WORD.findall(text.lower())[:MAX_WORDS])


def task_keys(compiled: CompiledWorld, tasks: Iterable[Task]) -> list[list[str]]:
    """Per task: [id, structure digest, wording], as a catalogue run keeps them (`results.jsonl`)."""
    shapes = tool_shapes(compiled)
    return [[t.id, task_structure(t, shapes), wording(t)] for t in tasks]


def _edit_keys(words: Sequence[int]) -> set[int]:
    """The 2n + 1 keys of a wording (module docstring): two wordings share one exactly when they
    are within one word edit (up to 64-bit hash collisions). Words are small ints, so the hashes
    are the same in every process."""
    n = len(words)
    prefix = [0] * (n + 1)
    for i, w in enumerate(words):
        prefix[i + 1] = hash((prefix[i], w))
    suffix = [-1] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = hash((words[i], suffix[i + 1]))
    return {hash((prefix[k], suffix[k])) for k in range(n + 1)} | {hash((prefix[i], suffix[i + 1])) for i in range(n)}


def near_duplicates(tasks: Sequence[tuple[str, str, str]], examples: int = 5) -> dict[str, Any]:
    """Of `tasks` as (label, structure, wording): how many are near duplicates (module docstring),
    their share, and up to `examples` pairs of labels."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, (_, structure, _) in enumerate(tasks):
        groups[structure].append(i)
    marked: set[int] = set()
    found: list[list[str]] = []
    for structure in sorted(groups):
        members = groups[structure]
        if len(members) < 2:
            continue
        numbers: dict[str, int] = {}
        first: dict[int, int] = {}  # key -> the first task of the group that has it
        for i in members:
            words = [numbers.setdefault(w, len(numbers)) for w in tasks[i][2].split()]
            for key in sorted(_edit_keys(words)):
                j = first.setdefault(key, i)
                if j != i and not (i in marked and j in marked):
                    if len(found) < examples:
                        found.append([tasks[j][0], tasks[i][0]])
                    marked |= {i, j}
    total = len(tasks)
    return {
        "tasks": total,
        "count": len(marked),
        "share": round(len(marked) / total, 4) if total else 0.0,
        "examples": found,
    }


# -- worlds of a run ----------------------------------------------------------------------------


def _family(blueprint: str) -> str:
    try:
        found = blueprints().get(blueprint)
    except BlueprintError:  # a blueprint file being edited: the world counts as a family of its own
        found = None
    return found.family if found is not None else blueprint


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"mean": 0.0, "max": 0.0, "pairs": 0}
    return {"mean": round(statistics.fmean(values), 3), "max": round(max(values), 3), "pairs": len(values)}


def _pairs(families: Sequence[str], rng: random.Random) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The pairs of worlds measured: (same family, different families), each class whole when it
    has at most `MAX_PAIRS` pairs, else `MAX_PAIRS` drawn uniformly from it with replacement."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(families):
        members[f].append(i)
    n = len(families)
    within_count = sum(len(m) * (len(m) - 1) // 2 for m in members.values())
    across_count = n * (n - 1) // 2 - within_count
    if within_count <= MAX_PAIRS:
        within = [(a, b) for m in members.values() for x, a in enumerate(m) for b in m[x + 1 :]]
    else:
        sized = [m for m in members.values() if len(m) > 1]
        weights = [len(m) * (len(m) - 1) for m in sized]
        within = [_two(rng, m) for m in rng.choices(sized, weights, k=MAX_PAIRS)]
    if across_count <= MAX_PAIRS:
        across = [(a, b) for a in range(n) for b in range(a + 1, n) if families[a] != families[b]]
    else:  # a world drawn in proportion to the worlds outside its family, then one of those
        outside = {f: [j for j in range(n) if families[j] != f] for f in members}
        across = [
            (a, rng.choice(outside[families[a]]))
            for a in rng.choices(range(n), [n - len(members[f]) for f in families], k=MAX_PAIRS)
        ]
    return within, across


def _two(rng: random.Random, members: list[int]) -> tuple[int, int]:
    a, b = rng.sample(members, 2)
    return a, b


def overlap_figures(worlds: Sequence[tuple[str, Mapping[str, int]]], seed: int) -> dict[str, Any]:
    """Mean and max overlap over pairs of `worlds` ((family, structure)) of one family and of
    different families, with the number of pairs measured."""
    rng = random.Random(derive_seed("catalogue-diversity", seed))
    within, across = _pairs([f for f, _ in worlds], rng)
    return {
        "overlap_within_family": _stats([overlap(worlds[a][1], worlds[b][1]) for a, b in within]),
        "overlap_across_families": _stats([overlap(worlds[a][1], worlds[b][1]) for a, b in across]),
    }


def diversity(accepted: Sequence[WorldResult], seed: int) -> dict[str, Any]:
    """The report's `diversity` block over a run's accepted worlds (those whose structure the run
    recorded: `worlds` counts them)."""
    measured = [r for r in accepted if r.structure]
    worlds = [(_family(r.blueprint), r.structure) for r in measured]
    tasks = [(f"{r.name}/{k[0]}", k[1], k[2]) for r in measured for k in r.task_keys]
    return {
        "worlds": len(measured),
        "families": len({f for f, _ in worlds}),
        **overlap_figures(worlds, seed),
        "near_duplicate_tasks": near_duplicates(tasks),
    }


def record(result: WorldResult, compiled: CompiledWorld, tasks: Sequence[Task]) -> None:
    """Keep an accepted world's structure and its tasks' keys on its result."""
    result.structure = world_structure(compiled)
    result.task_keys = task_keys(compiled, tasks)


def backfill(results: Iterable[WorldResult], root: Path) -> None:
    """Accepted results of an earlier run that kept no structure (`results.jsonl` written before
    it did) get it from the world and task files the run wrote, when they are there."""
    for result in results:
        spec_path, tasks_path = root / "worlds" / f"{result.name}.yaml", root / "tasks" / f"{result.name}.yaml"
        if result.accepted and not result.structure and spec_path.exists() and tasks_path.exists():
            compiled = compile_spec(load_spec(spec_path))
            tasks = TaskFile.model_validate(yaml.safe_load(tasks_path.read_text(encoding="utf-8"))).tasks
            record(result, compiled, tasks)
