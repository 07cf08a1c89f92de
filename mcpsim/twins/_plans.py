"""The plans of a twin's tasks, each kind in its own stream: a write (create a record), a change of
an existing record, a workflow (create a record, then change it) and a lookup (how many records a
search matches); each plan a gold solution that works on the start episode, its request in words,
and what a near miss or a wrong answer would be."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpsim.taskgen import GREETING_SLOT, plural
from mcpsim.tasks import Action, CountFact, Fact
from mcpsim.twins._requests import COUNT_ALL, COUNTS, entity_label, worded_request
from mcpsim.twins._sandbox import TwinSandbox, record_texts
from mcpsim.twins._storage import key_of
from mcpsim.twins._twin_spec import WRITES, TwinTool
from mcpsim.twins._world import sample_arguments

Kind = Literal["write", "change", "workflow", "lookup"]
KINDS: tuple[Kind, ...] = ("write", "change", "lookup", "workflow")


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


class TwinPlanner:
    """Plans over a twin's start episode, drawn with the sandbox's random generator."""

    def __init__(self, sandbox: TwinSandbox) -> None:
        self.sandbox = sandbox
        self.spec = sandbox.spec
        self.start = sandbox.start
        self.rng = sandbox.rng
        self.tools = sandbox.tools

    def request(self, tool: TwinTool, args: dict[str, Any]) -> str:
        return worded_request(self.spec, tool, args)

    def write_plans(self) -> Iterator[Plan]:
        for _ in range(5):
            for tool in self._shuffled([t for t in self.tools if t.operation.kind in ("create", "upsert")]):
                args = self.sandbox.arguments(tool, self.sandbox.existing(self.start))
                gold = [Action(tool=tool.name, args=args)]
                if self.sandbox.works(self.start, gold):
                    yield Plan("write", gold, self.request(tool, args), [tool.name])

    def change_plans(self) -> Iterator[Plan]:
        changing = [t for t in self.tools if t.operation.kind in WRITES - {"create", "upsert"}]
        for tool, entity, rows in self._with_rows(changing):
            n = self.rng.randrange(len(rows))
            args = self.sandbox.arguments(tool, self.sandbox.existing(self.start, {entity: n}))
            gold = [Action(tool=tool.name, args=args)]
            if not self.sandbox.works(self.start, gold):
                continue
            near_miss = None
            if len(rows) > 1:  # the same change to another record
                miss = [
                    Action(
                        tool=tool.name,
                        args=self.sandbox.arguments(tool, self.sandbox.existing(self.start, {entity: n + 1})),
                    )
                ]
                near_miss = ("changes another record", miss) if self.sandbox.works(self.start, miss) else None
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
                    first = Action(
                        tool=create.name, args=self.sandbox.arguments(create, self.sandbox.existing(self.start))
                    )
                    fork = self.start.fork(id="twin-tasks-workflow")
                    try:
                        if fork.call(first.tool, first.args).is_error:
                            continue
                        entity = create.operation.entity or ""
                        made = self.sandbox.rows(fork, entity)
                        args = self.sandbox.arguments(tool, self.sandbox.existing(fork, {entity: len(made) - 1}))
                    finally:
                        fork.close()
                    second = Action(tool=tool.name, args=args)
                    gold = [first, second]
                    if self.sandbox.works(self.start, gold) and self.sandbox.works(self.start, [first]):
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
            args = sample_arguments(self.spec, tool, self.sandbox.existing(self.start))
            if tool.operation.query:
                args[tool.operation.query] = query
            found = self._matches(tool, args)
            if found is None or found == 0:
                continue
            noun = entity_label(entity)
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
        texts = [" ".join(t for t in record_texts(r)).lower() for r in rows]
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
                if rows := self.sandbox.rows(self.start, entity):
                    yield tool, entity, rows

    def _shuffled(self, items: list[Any]) -> list[Any]:
        items = list(items)
        self.rng.shuffle(items)
        return items
