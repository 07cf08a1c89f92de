"""Tasks for a twin (`mcpsim gen --from-mcp`): real mcpsim tasks over the twin's seeded data, each
kept only if `mcpsim check`'s audit (`mcpsim.audit._audit.check_task`, what the factory's validator runs on
a world's tasks) finds nothing wrong with it: the gold solution passes twice, a do-nothing agent
fails, every cheating baseline fails, the alternatives pass and the near misses fail.

    generate_twin_tasks(spec, *, count=10, seed=0) -> list[Task]
    validate_twin_tasks(spec, *, count=10, seed=0) -> ValidationReport   # the factory's report
    python -m mcpsim.twins._tasks TWIN.json [--count N] [--seed S] > TWIN.tasks.yaml

Only the tools the twin simulates are used (a `call` tool changes nothing and replays recorded
answers). The kinds, taken in turn:

- `write`: create a record (a create or upsert tool, with new values);
- `change`: change an existing record (update, append to or remove from a list field, rename,
  delete);
- `workflow`: create a record, then change it;
- `lookup`: how many records a search matches (a list tool with a query), stated in the answer.

The rubric: a row check per record the gold solution created or deleted (the record's key is the
table's `id`), `gold_state` (every record as the gold solution leaves it), `allowed_changes`, and
the answer's facts for a lookup."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpsim.acceptance import ValidationReport
from mcpsim.audit import check_task
from mcpsim.engine import Episode, TemplateCache
from mcpsim.grading import Verifier
from mcpsim.taskgen import GREETING_SLOT, GREETINGS, PERSONAS, keep_sound, plans_in_turn, plural, reworded
from mcpsim.tasks import (
    CANARY_PREFIX,
    Action,
    AllowedChanges,
    AnswerFacts,
    Check,
    CountFact,
    Fact,
    GoldState,
    RowAbsent,
    RowExists,
    Solution,
    Task,
    TaskFile,
    TaskSet,
    UserSpec,
)
from mcpsim.twins._infer import WRITES, TwinSpec, TwinTool, inline_refs, is_text, load_twin, properties_of, words
from mcpsim.twins._world import compile_twin, first_option, key_of, sample_arguments
from mcpsim.world import derive_seed

Kind = Literal["write", "change", "workflow", "lookup"]
KINDS: tuple[Kind, ...] = ("write", "change", "lookup", "workflow")
DIFFICULTY: dict[Kind, Literal["easy", "medium", "hard"]] = {
    "write": "easy",
    "change": "medium",
    "lookup": "easy",
    "workflow": "hard",
}
SCALE = "default"
VOCABULARY = (  # values of new records: plain words, none of them a number
    "amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lagoon", "maple", "nectar", "orchid", "pebble", "quartz", "raven", "saffron", "tundra",
)  # fmt: skip
REQUESTS = (
    "{greeting}. Could you {request}?",
    "{greeting}. Please {request}. Thanks!",
    "{greeting}. I need you to {request}.",
)
COUNT_ALL = (
    "{greeting}. How many {plural} are there?",
    "{greeting}. Could you tell me how many {plural} there are?",
)
COUNTS = (
    "{greeting}. How many {plural} match {query!r}?",
    "{greeting}. Could you count the {plural} that match {query!r} for me?",
)


@dataclass
class Plan:
    kind: Kind
    gold: list[Action]
    request: str
    tags: list[str]
    facts: list[Fact] = field(default_factory=list)
    near_miss: tuple[str, list[Action]] | None = None
    wrong_answer: str | None = None

    def key(self) -> str:
        return json.dumps([self.kind, [a.model_dump() for a in self.gold]], sort_keys=True)


def canary(spec: TwinSpec) -> str:
    return f"{CANARY_PREFIX}-{hashlib.sha256(('twin-canary' + spec.digest()).encode()).hexdigest()[:24]}"


def twin_task_set(spec: TwinSpec, tasks: list[Task]) -> TaskSet:
    """A twin's tasks as its task set (one file, with a canary derived from the twin spec)."""
    return TaskSet(world=spec.name, files=[TaskFile(world=spec.name, canary=canary(spec), tasks=tasks)])


def _label(entity: str) -> str:
    return entity.replace("_", " ")


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class TwinTaskGenerator:
    def __init__(self, spec: TwinSpec, *, seed: int = 0) -> None:
        self.spec = spec
        self.seed = seed
        self.world = compile_twin(spec)
        self.templates = TemplateCache(None)
        self.start = Episode.create(self.world, seed, SCALE, templates=self.templates)
        self.rng = random.Random(derive_seed(seed, "twin-tasks", spec.digest()))
        self.tools = [t for t in spec.tools if t.operation.kind != "call" and t.operation.entity in spec.entities]
        self.dropped: Counter[str] = Counter()
        self.fresh = 0

    def close(self) -> None:
        self.start.close()

    # -- data ---------------------------------------------------------------------------------

    def rows(self, episode: Episode, entity: str) -> list[dict[str, Any]]:
        table = f"{entity}_records"
        return [json.loads(r["data"]) for r in episode.query(f'SELECT data FROM "{table}" ORDER BY pos')]

    def existing(self, episode: Episode, first: dict[str, int] | None = None) -> dict[str, list[dict[str, Any]]]:
        """Every entity's rows, rotated so the one `first` names comes first (sample_arguments
        names the first row)."""
        found = {}
        for entity in self.spec.entities:
            rows = self.rows(episode, entity)
            n = (first or {}).get(entity, 0) % len(rows) if rows else 0
            found[entity] = rows[n:] + rows[:n]
        return found

    def word(self) -> str:
        self.fresh += 1
        return f"{self.rng.choice(VOCABULARY)}-{self.fresh}"

    def arguments(self, tool: TwinTool, existing: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """Arguments naming existing records (the first of each entity), with new values where
        the tool writes them: a new key for a create (a path beside the existing ones), new text
        and list items, an edit of a whole word of the record's text."""
        args = sample_arguments(self.spec, tool, existing)
        op = tool.operation
        entity = self.spec.entities[op.entity or ""]
        rows = existing.get(op.entity or "", [])
        new_key = op.kind in ("create", "upsert")
        text = " ".join(_texts({k: v for k, v in rows[0].items() if k not in entity.key})) if rows else ""

        def path() -> str:
            keys = [str(key_of(entity, r)) for r in rows if "/" in str(key_of(entity, r))]
            folder = keys[0].rsplit("/", 1)[0] if keys else "/twin"
            suffixes = [m.group(0) for k in keys if (m := re.search(r"\.[a-z0-9]+$", k))]
            suffix = suffixes[0] if suffixes else ".txt" if words(op.entity or "")[-1:] == ["file"] else ""
            return f"{folder}/{self.word()}{suffix}"

        def fresh(name: str, value: Any, schema: dict[str, Any], in_record: bool) -> Any:
            schema = first_option(schema)
            is_path = words(name)[-1:] == ["path"] or (name == op.target and words(entity.key[0])[-1:] == ["path"])
            if words(name)[:1] == ["old"] and isinstance(value, str) and value:
                found = re.search(rf"{re.escape(value)}\S*", text)
                return found.group(0) if found else value
            if value == "sample" or (in_record and name in entity.key and new_key) or name == op.target:
                if not is_text(schema) or "enum" in schema:
                    return value
                return path() if is_path else self.word()
            if isinstance(value, list) and value == ["sample"]:
                return [f"{self.word()} noted"]
            if isinstance(value, list) and name != op.items and all(isinstance(v, dict) for v in value):
                props = properties_of(first_option(first_option(schema).get("items") or {}))
                return [{k: fresh(k, v, props.get(k, {}), False) for k, v in r.items()} for r in value]
            return value

        schema = properties_of(inline_refs(tool.input_schema))
        out: dict[str, Any] = {}
        for name, value in args.items():
            items = first_option(schema.get(name, {})).get("items") or {}
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and name == op.items:
                props = properties_of(first_option(items))
                out[name] = [{k: fresh(k, v, props.get(k, {}), True) for k, v in r.items()} for r in value]
            else:
                out[name] = fresh(name, value, schema.get(name, {}), op.items is None)
        return out

    def works(self, episode: Episode, actions: list[Action]) -> bool:
        """Whether the actions all succeed on a fork of `episode` and change its rows."""
        fork = episode.fork(id="twin-tasks")
        try:
            before = fork.state_hash()
            if any(fork.call(a.tool, a.args).is_error for a in actions):
                return False
            return fork.state_hash() != before
        finally:
            fork.close()

    # -- plans ----------------------------------------------------------------------------------

    def _record_words(self, tool: TwinTool, args: dict[str, Any]) -> str:
        """What a write asks for, in words: the record's key and values."""
        op = tool.operation
        entity = self.spec.entities[op.entity or ""]
        records = args.get(op.items) if op.items else [args]
        parts = []
        for record in records or []:
            if not isinstance(record, dict):
                continue
            values = [f"{k} {_shown(v)}" for k, v in record.items() if k not in entity.key and v not in (None, [], "")]
            if len(entity.key) > 1:  # a relation: its key is its values
                parts.append(
                    ", ".join(f"{k} {_shown(record.get(k))}" for k in entity.key) + "".join(f", {v}" for v in values)
                )
                continue
            parts.append(f"{key_of(entity, record)}" + (f" ({', '.join(values)})" if values else ""))
        return "; ".join(parts)

    def request(self, tool: TwinTool, args: dict[str, Any]) -> str:
        op = tool.operation
        label = _label(op.entity or "")
        what = self._record_words(tool, args)
        if op.kind in ("create", "upsert"):
            return f"add the {label} {what}" if op.items is None else f"add this {label}: {what}"
        if op.kind == "delete":
            keys = args.get(op.keys or "") if op.keys else None
            named = ", ".join(map(str, keys)) if isinstance(keys, list) else str(keys) if keys else what
            return f"delete the {label} {named}"
        if op.kind == "rename":
            return f"move the {label} {args.get(op.keys or '')} to {args.get(op.target or '')}"
        if op.kind in ("append", "remove_items"):
            items = [i for i in args.get(op.items or "") or [] if isinstance(i, dict)]
            listed = "; ".join(f"{i.get(op.ref or '')}: {_shown(i.get(op.values or ''))}" for i in items)
            verb = "add" if op.kind == "append" else "remove"
            where = "to" if op.kind == "append" else "from"
            return f"{verb} these {op.field} {where} the {plural(label)} ({listed})"
        edits = [
            f"replace {old!r} with {new!r}"
            for v in args.values()
            if isinstance(v, list)
            for item in v
            if isinstance(item, dict) and len(pair := [x for x in item.values() if isinstance(x, str)]) == 2
            for old, new in [pair]
        ]
        key = args.get(op.keys or "")
        changes = ", ".join(edits) or ", ".join(f"{k} {_shown(v)}" for k, v in args.items() if k != op.keys)
        return f"change the {label} {key}: {changes}"

    def write_plans(self) -> Iterator[Plan]:
        for _ in range(5):
            for tool in self._shuffled([t for t in self.tools if t.operation.kind in ("create", "upsert")]):
                args = self.arguments(tool, self.existing(self.start))
                gold = [Action(tool=tool.name, args=args)]
                if self.works(self.start, gold):
                    yield Plan("write", gold, self.request(tool, args), [tool.name])

    def change_plans(self) -> Iterator[Plan]:
        changing = [t for t in self.tools if t.operation.kind in WRITES - {"create", "upsert"}]
        for tool, entity, rows in self._with_rows(changing):
            n = self.rng.randrange(len(rows))
            args = self.arguments(tool, self.existing(self.start, {entity: n}))
            gold = [Action(tool=tool.name, args=args)]
            if not self.works(self.start, gold):
                continue
            near_miss = None
            if len(rows) > 1:  # the same change to another record
                miss = [Action(tool=tool.name, args=self.arguments(tool, self.existing(self.start, {entity: n + 1})))]
                near_miss = ("changes another record", miss) if self.works(self.start, miss) else None
            yield Plan("change", gold, self.request(tool, args), [tool.name], near_miss=near_miss)

    def workflow_plans(self) -> Iterator[Plan]:
        creates = [t for t in self.tools if t.operation.kind in ("create", "upsert")]
        for _ in range(3):
            for create in self._shuffled(creates):
                then = [
                    t
                    for t in self.tools
                    if t.operation.entity == create.operation.entity and t.operation.kind in ("append", "update")
                ]
                for tool in self._shuffled(then)[:1]:
                    first = Action(tool=create.name, args=self.arguments(create, self.existing(self.start)))
                    fork = self.start.fork(id="twin-tasks-workflow")
                    try:
                        if fork.call(first.tool, first.args).is_error:
                            continue
                        entity = create.operation.entity or ""
                        made = self.rows(fork, entity)
                        args = self.arguments(tool, self.existing(fork, {entity: len(made) - 1}))
                    finally:
                        fork.close()
                    second = Action(tool=tool.name, args=args)
                    gold = [first, second]
                    if self.works(self.start, gold) and self.works(self.start, [first]):
                        request = f"{self.request(create, first.args)}, and then {self.request(tool, second.args)}"
                        yield Plan(
                            "workflow",
                            gold,
                            request,
                            [create.name, tool.name],
                            near_miss=("stops after the first step", [first]),
                        )

    def lookup_plans(self) -> Iterator[Plan]:
        """How many records a search matches, or (a list without a query) how many there are."""
        listing = [t for t in self.tools if t.operation.kind == "list"]
        for tool, entity, rows in self._with_rows(listing):
            query = self._query_word(rows) if tool.operation.query else None
            if tool.operation.query and query is None:
                continue
            args = sample_arguments(self.spec, tool, self.existing(self.start))
            if tool.operation.query:
                args[tool.operation.query] = query
            found = self._matches(tool, args)
            if found is None or found == 0:
                continue
            noun = _label(entity)
            fact = CountFact(count=found, noun=noun)
            templates = COUNTS if query is not None else COUNT_ALL
            request = self.rng.choice(templates).format(greeting=GREETING_SLOT, plural=plural(noun), query=query)
            yield Plan(
                "lookup",
                [Action(tool=tool.name, args=args)],
                request,
                [tool.name],
                facts=[fact],
                wrong_answer=f"There are {found + 1} {plural(noun)}.",
            )

    def _query_word(self, rows: list[dict[str, Any]]) -> str | None:
        """A word of some records' text that not every record has."""
        texts = [" ".join(t for t in _texts(r)).lower() for r in rows]
        candidates = sorted({w for t in texts for w in re.findall(r"[a-z]{4,}", t)})
        self.rng.shuffle(candidates)
        for word in candidates:
            n = sum(word in t for t in texts)
            if 0 < n < len(rows) or len(rows) == 1:
                return word
        return None

    def _matches(self, tool: TwinTool, args: dict[str, Any]) -> int | None:
        """How many records of the tool's entity its answer lists."""
        result = self.start.fork(id="twin-tasks-lookup")
        try:
            answer = result.call(tool.name, args)
        finally:
            result.close()
        if answer.is_error:
            return None
        entity = self.spec.entities[tool.operation.entity or ""]
        value = answer.value
        if isinstance(value, dict):
            for listed in value.values():
                if isinstance(listed, list) and all(isinstance(r, dict) and key_of(entity, r) for r in listed):
                    return len(listed)
            return None
        return len([line for line in str(value).splitlines() if line.strip()])

    def _with_rows(
        self, tools: list[TwinTool], rounds: int = 3
    ) -> Iterator[tuple[TwinTool, str, list[dict[str, Any]]]]:
        """Each tool with its entity's rows (if it has any), in a new order each round."""
        for _ in range(rounds):
            for tool in self._shuffled(tools):
                entity = tool.operation.entity or ""
                if rows := self.rows(self.start, entity):
                    yield tool, entity, rows

    def _shuffled(self, items: list[Any]) -> list[Any]:
        items = list(items)
        self.rng.shuffle(items)
        return items

    # -- tasks ----------------------------------------------------------------------------------

    def task(self, plan: Plan, number: int) -> Task:
        gold = plan.gold
        rubric: list[Check] = [*self._row_checks(gold)]
        writes = plan.kind != "lookup"
        rubric.append(
            GoldState(
                type="gold_state",
                requirement="Every record ends as the request leaves it.",
                noop_passes=not writes,
            )
        )
        rubric.append(
            AllowedChanges(
                type="allowed_changes", requirement="Nothing changed beyond what was asked.", noop_passes=True
            )
        )
        if plan.facts:
            rubric.append(
                AnswerFacts(type="answer_facts", requirement="The final answer states the count.", noop_passes=False)
            )
        alternatives = []
        if plan.facts:
            alternatives.append(Solution(name="states the answer in other words", answer=reworded(plan.facts)))
        elif (read := self._read_before(gold[0])) is not None:
            alternatives.append(Solution(name="reads the records before changing them", steps=[read, *gold]))
        near_misses = []
        if plan.near_miss is not None:
            near_misses.append(Solution(name=plan.near_miss[0], steps=list(plan.near_miss[1])))
        if plan.wrong_answer is not None:
            near_misses.append(Solution(name="answers with a wrong count", answer=plan.wrong_answer))
        instruction = (
            plan.request
            if plan.kind == "lookup"
            else self.rng.choice(REQUESTS).format(greeting=GREETING_SLOT, request=plan.request)
        )
        tag = re.sub(r"[^a-z0-9_.-]", "-", plan.tags[-1].lower())[:60]
        return Task(
            id=f"{plan.kind}-{number:03d}-{tag}",
            instruction=instruction.replace(GREETING_SLOT, greeting := self.rng.choice(GREETINGS)),
            user=UserSpec(persona=self.rng.choice(PERSONAS), wants=plan.request.replace(GREETING_SLOT, greeting)),
            seed=self.seed,
            scale=SCALE,
            gold=gold,
            answer=plan.facts,
            rubric=rubric,
            alternatives=alternatives,
            near_misses=near_misses,
            tags=["twin", plan.kind, *plan.tags],
            difficulty=DIFFICULTY[plan.kind],
            split=self.rng.choices(["train", "dev", "test"], weights=[6, 2, 2])[0],
        )

    def _read_before(self, action: Action) -> Action | None:
        """A search of the records the action writes, with no query (all of them)."""
        entity = self.spec.tool(action.tool).operation.entity
        for tool in self.tools:
            if tool.operation.kind == "list" and tool.operation.entity == entity:
                args = sample_arguments(self.spec, tool, self.existing(self.start))
                if tool.operation.query:
                    args[tool.operation.query] = ""
                fork = self.start.fork(id="twin-tasks-read")
                try:
                    if not fork.call(tool.name, args).is_error:
                        return Action(tool=tool.name, args=args)
                finally:
                    fork.close()
        return None

    def _row_checks(self, gold: list[Action]) -> list[Check]:
        """A check per record the gold solution created (it exists) or deleted (it is gone)."""
        episode = self.start.fork(id="twin-tasks-gold")
        try:
            for a in gold:
                episode.call(a.tool, a.args)
            changes = episode.net_changes()
        finally:
            episode.close()
        checks: list[Check] = []
        for (table, _), change in sorted(changes.items()):
            if not table.endswith("_records") or (change.before is None) == (change.after is None):
                continue  # another table, or a record changed in place (gold_state grades it)
            label = _label(table.removesuffix("_records"))
            row = change.before or change.after or {}
            common: dict[str, Any] = {"table": table, "where": {"id": row["id"]}, "noop_passes": False}
            if change.after is None:
                checks.append(
                    RowAbsent(type="row_absent", requirement=f"The {label} {row['id']} is deleted.", **common)
                )
            else:
                checks.append(RowExists(type="row_exists", requirement=f"The {label} {row['id']} exists.", **common))
        return checks

    def sound(self, task: Task) -> list[str]:
        """What `mcpsim check` finds wrong with a task."""
        tasks = twin_task_set(self.spec, [task])
        verifier = Verifier(self.world, tasks, templates=self.templates)
        return check_task(self.world, verifier, task, tasks.canaries).problems

    def candidates(self) -> Iterator[Task]:
        """Every candidate task, in the order `generate` tries them: the kinds in turn, each plan once."""
        sources: dict[str, Iterator[Plan]] = {
            "write": self.write_plans(),
            "change": self.change_plans(),
            "lookup": self.lookup_plans(),
            "workflow": self.workflow_plans(),
        }
        for number, plan in enumerate(plans_in_turn(sources), 1):
            yield self.task(plan, number)

    def generate(self, count: int) -> list[Task]:
        """Up to `count` sound tasks (taskgen's loop: `keep_sound`); a candidate the audit refuses
        is dropped and counted (by the check it fails) in `dropped`."""
        return keep_sound(self.candidates(), count, self.sound, self.dropped)


def _texts(row: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for value in row.values():
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found += [v for v in value if isinstance(v, str)]
    return found


def generate_twin_tasks(spec: TwinSpec, *, count: int = 10, seed: int = 0) -> list[Task]:
    """Up to `count` audited tasks over the twin seeded with `seed`; the same spec and seed give
    the same tasks in any process. The audit runs an event loop of its own: from async code, call
    this in a worker thread (`anyio.to_thread.run_sync`)."""
    generator = TwinTaskGenerator(spec, seed=seed)
    try:
        return generator.generate(count)
    finally:
        generator.close()


def validate_twin_tasks(spec: TwinSpec, *, count: int = 10, seed: int = 0) -> ValidationReport:
    """The factory's validation report for a twin's tasks: `tasks_generated` fails when fewer
    than `count` sound tasks were found; `candidates_dropped` counts the candidates the audit
    refused, by the check they failed."""
    generator = TwinTaskGenerator(spec, seed=seed)
    try:
        report = ValidationReport(spec.name, generator.start.state_hash())
        report.tasks = generator.generate(count)
        report.dropped = dict(generator.dropped)
    finally:
        generator.close()
    if len(report.tasks) < count:
        why = ", ".join(f"{n} by {c}" for c, n in Counter(report.dropped).most_common()) or "none; no more plans"
        report.failures["tasks_generated"].append(
            f"{len(report.tasks)} of {count} tasks generated (candidates dropped: {why})"
        )
    return report


def main(argv: list[str] | None = None) -> int:
    import yaml

    from mcpsim import logs

    parser = argparse.ArgumentParser(prog="python -m mcpsim.twins._tasks", description=__doc__.split("\n\n")[0])
    parser.add_argument("twin", help="a twin spec (JSON), as `mcpsim gen --from-mcp` writes it")
    parser.add_argument("--count", type=int, default=10, help="tasks to generate")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the twin's data")
    args = parser.parse_args(argv)
    logs.configure("WARNING")
    spec = load_twin(args.twin)
    report = validate_twin_tasks(spec, count=args.count, seed=args.seed)
    tasks = twin_task_set(spec, report.tasks).files[0]
    sys.stdout.write(yaml.safe_dump(tasks.model_dump(mode="json", exclude_defaults=True), sort_keys=False))
    summary = {
        k: v for k, v in report.to_json().items() if k in ("world", "accepted", "failures", "candidates_dropped")
    }
    sys.stderr.write(json.dumps(summary | {"tasks": len(report.tasks)}) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
