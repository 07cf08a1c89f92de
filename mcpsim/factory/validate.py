"""Validation of a compiled world before it is accepted: its tools are driven with arguments drawn
from its seeded data until each has succeeded and each named refusal has been seen.

Checks (a report counts the failures of each):
- `seed_constraints`: every seeded row keeps its fields' constraints and the world's invariants;
- `tool_succeeds`: every tool succeeds at least once (a precondition that can never be satisfied
  shows here, with the refusal that always blocked it);
- `precondition_violated`: every named refusal (preconditions, state transitions, ownership,
  references) is met at least once (a precondition that can never be violated shows here);
- `refusal_changes_nothing`: a refused call leaves the state hash as it was;
- `refusal_named`: every business error is one of the tool's named refusals (or a not-found);
- `no_simulator_bug`: no call raised anything but a business error;
- `deterministic_template`: two processes build the same template hash.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from faker import Faker

from mcpsim.engine.episode import CallResult, Episode
from mcpsim.engine.templates import TemplateCache
from mcpsim.factory.checks import NUMERIC, owner_fields
from mcpsim.factory.compiler import CompiledWorld
from mcpsim.factory.operands import message_pattern
from mcpsim.factory.schema import ISO_DATE, ISO_DATETIME
from mcpsim.factory.spec import ActionSpec, FakerGen, FieldSpec
from mcpsim.world import derive_seed

CHECKS = (
    "seed_constraints",
    "tool_succeeds",
    "precondition_violated",
    "refusal_changes_nothing",
    "refusal_named",
    "no_simulator_bug",
    "deterministic_template",
)
REQUIRED_ORIGINS = {"precondition", "state", "reference", "input"}
NOT_FOUND = re.compile(r"^.+ not found$")
CALLS_PER_ACTION = 400
_MATCH, _OTHER = "\x00owner", "\x00other"  # an owner argument: the row's own owner, or someone else


@dataclass
class ActionStats:
    calls: int = 0
    successes: int = 0
    refusals: Counter[str] = field(default_factory=Counter)


@dataclass
class ValidationReport:
    world: str
    template_hash: str
    failures: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CHECKS})
    actions: dict[str, ActionStats] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(self.failures.values())

    def counts(self) -> dict[str, int]:
        """Failures per check."""
        return {check: len(found) for check, found in self.failures.items()}

    def failed_checks(self) -> list[str]:
        return [check for check, found in self.failures.items() if found]

    def to_json(self) -> dict[str, Any]:
        return {
            "world": self.world,
            "accepted": self.ok,
            "template_hash": self.template_hash,
            "failures_per_check": self.counts(),
            "failures": {k: v for k, v in self.failures.items() if v},
            "actions": {
                name: {"calls": s.calls, "successes": s.successes, "refusals": dict(s.refusals)}
                for name, s in self.actions.items()
            },
        }


class Validator:
    def __init__(self, compiled: CompiledWorld, *, seed: int = 0, scale: str = "small") -> None:
        self.compiled = compiled
        self.spec = compiled.spec
        self.world = compiled.world
        self.seed = seed
        self.scale = scale
        self.templates = TemplateCache(None)  # in memory: nothing shared with other processes
        self.rng = random.Random(derive_seed(seed, "validate", self.spec.digest()))

    def run(self, *, processes: bool = True) -> ValidationReport:
        episode = Episode.create(self.world, self.seed, self.scale, templates=self.templates)
        report = ValidationReport(self.world.name, episode.state_hash())
        self._check_seed(episode, report)
        for action in self.spec.actions:
            report.actions[action.name] = self._exercise(action, episode, report)
        self._check_coverage(report)
        if processes:
            self._check_processes(report)
        episode.close()
        return report

    # -- seed data --------------------------------------------------------------------------------

    def _check_seed(self, episode: Episode, report: ValidationReport) -> None:
        for entity, model in self.compiled.models.items():
            for row in episode.query(f'SELECT * FROM "{model.table.name}"'):
                for name, f in model.spec.fields.items():
                    if (problem := field_problem(f, row[name])) is not None:
                        report.failures["seed_constraints"].append(f"{entity} {row['id']}.{name}: {problem}")
        for inv in self.spec.invariants:
            table = self.compiled.models[inv.entity].table.name
            if inv.kind == "non_negative":
                bad = episode.query(f'SELECT id FROM "{table}" WHERE "{inv.field}" < 0')
            elif inv.kind == "capacity":
                limit = f'"{inv.limit_field}"' if inv.limit_field else str(inv.limit)
                bad = episode.query(f'SELECT id FROM "{table}" WHERE "{inv.field}" > {limit}')
            else:
                continue
            report.failures["seed_constraints"] += [f"{inv.entity} {r['id']} breaks {inv.error_name}" for r in bad]

    # -- driving the tools ------------------------------------------------------------------------

    def _exercise(self, action: ActionSpec, start: Episode, report: ValidationReport) -> ActionStats:
        stats = ActionStats()
        base = start.snapshot()
        candidates = self._candidates(action, start)
        successes: list[dict[str, Any]] = []
        episode = Episode.restore(self.world, base)
        for args in candidates:
            if stats.calls >= CALLS_PER_ACTION // 2:
                break
            if self._call(action, episode, args, stats, report):
                successes.append(args)
                if not action.read_only:
                    episode.close()
                    episode = Episode.restore(self.world, base)
        episode.close()
        for args in successes[:4]:  # drive state: repeat a write with one argument varied, nothing restored
            self._drive(action, base, args, start, stats, report)
        return stats

    def _drive(
        self,
        action: ActionSpec,
        base: bytes,
        args: dict[str, Any],
        start: Episode,
        stats: ActionStats,
        report: ValidationReport,
    ) -> None:
        if action.read_only:
            return
        params = self._parameter_values(action, start)
        for name, values in params.items():
            episode = Episode.restore(self.world, base)
            for value in [args[name], *values][:12]:
                if stats.calls >= CALLS_PER_ACTION:
                    break
                self._call(action, episode, self._resolved(action, args | {name: value}, episode), stats, report)
            episode.close()

    def _call(
        self, action: ActionSpec, episode: Episode, args: dict[str, Any], stats: ActionStats, report: ValidationReport
    ) -> bool:
        args = self._resolved(action, args, episode)
        before = episode.state_hash()
        result = episode.call(action.name, args)
        stats.calls += 1
        if not result.is_error:
            stats.successes += 1
            return True
        self._judge_refusal(action, args, result, before, episode, stats, report)
        return False

    def _judge_refusal(
        self,
        action: ActionSpec,
        args: dict[str, Any],
        result: CallResult,
        before: str,
        episode: Episode,
        stats: ActionStats,
        report: ValidationReport,
    ) -> None:
        where = f"{action.name}({json.dumps(args, default=str)})"
        error = result.error or ""
        if result.bug:
            report.failures["no_simulator_bug"].append(f"{where}: {episode.flags[-1] if episode.flags else error}")
            return
        if episode.state_hash() != before:
            report.failures["refusal_changes_nothing"].append(f"{where} was refused ({error}) but changed the state")
        name = self._refusal_name(action, error)
        if name is None:
            report.failures["refusal_named"].append(f"{where}: unnamed error {error!r}")
            return
        stats.refusals[name] += 1

    def _refusal_name(self, action: ActionSpec, error: str) -> str | None:
        for refusal in self.compiled.actions[action.name].refusals:
            if message_pattern(refusal.template).match(error):
                return refusal.name
        if NOT_FOUND.match(error):
            return "not_found"
        if error.startswith("Invalid arguments"):
            return "invalid_arguments"
        return None

    def _check_coverage(self, report: ValidationReport) -> None:
        for action in self.spec.actions:
            stats = report.actions[action.name]
            if stats.successes == 0:
                blocked = ", ".join(f"{n} x{c}" for n, c in stats.refusals.most_common()) or "nothing"
                report.failures["tool_succeeds"].append(
                    f"{action.name} never succeeded in {stats.calls} calls (refused by: {blocked})"
                )
            for refusal in self.compiled.actions[action.name].refusals:
                required = refusal.origin in REQUIRED_ORIGINS or refusal.name in owner_invariants(self.compiled)
                if required and stats.refusals[refusal.name] == 0:
                    report.failures["precondition_violated"].append(
                        f"{action.name}: {refusal.name} was never violated in {stats.calls} calls"
                    )

    def _check_processes(self, report: ValidationReport) -> None:
        hashes = [
            template_hash_in_subprocess(self.spec.model_dump(mode="json"), self.seed, self.scale) for _ in range(2)
        ]
        if len(set(hashes + [report.template_hash])) != 1:
            report.failures["deterministic_template"].append(
                f"template hashes differ: this process {report.template_hash}, others {hashes}"
            )

    # -- arguments ---------------------------------------------------------------------------------

    def _candidates(self, action: ActionSpec, episode: Episode) -> list[dict[str, Any]]:
        params = self._parameter_values(action, episode)
        names = list(params)
        combos = [dict(zip(names, values, strict=True)) for values in itertools.product(*params.values())]
        if len(combos) > CALLS_PER_ACTION // 2:
            combos = self.rng.sample(combos, CALLS_PER_ACTION // 2)
        return combos

    def _parameter_values(self, action: ActionSpec, episode: Episode) -> dict[str, list[Any]]:
        tool = self.world.tools[action.name]
        model = self.compiled.models[action.entity]
        owners = set(owner_fields(self.spec, action))
        values: dict[str, list[Any]] = {}
        for p in tool.parameters:
            if p.name in owners:
                values[p.name] = [_MATCH, _OTHER]
            elif p.name == "limit":
                values[p.name] = [5]
            elif p.name == "offset":
                values[p.name] = [0]
            elif p.name == "query":
                values[p.name] = self._query_words(action, episode)
            elif p.name == "amount":
                values[p.name] = self._amounts(model.spec.fields[action.field or ""])
            elif (entity := self._entity_of(action, p.name)) is not None:
                values[p.name] = self._row_ids(entity, episode)
            else:
                f = model.spec.fields[p.name]
                optional = p.default is None
                values[p.name] = self._field_values(action.entity, p.name, f, episode) + ([None] if optional else [])
        return values

    def _entity_of(self, action: ActionSpec, name: str) -> str | None:
        """The entity whose ids an argument takes."""
        entity = action.entity
        if name in (f"{entity}_id", f"source_{entity}_id", f"target_{entity}_id"):
            return entity
        f = self.spec.entities[entity].fields.get(name)
        return f.entity if f is not None and f.type == "ref" else None

    def _row_ids(self, entity: str, episode: Episode) -> list[Any]:
        """A spread of rows: the first few, a few in each state, the extremes of each number."""
        model = self.compiled.models[entity]
        table = model.table.name
        picked = [r["id"] for r in episode.query(f'SELECT id FROM "{table}" ORDER BY id LIMIT 4')]
        groups: list[tuple[str, tuple[Any, ...]]] = [("1 = 1", ())]
        if model.state_field:
            states = model.spec.fields[model.state_field].values or []
            groups += [(f'"{model.state_field}" = ?', (state,)) for state in states]
        numbers = [name for name, f in model.spec.fields.items() if f.type in NUMERIC]
        for where, params in groups:  # in each state: a few rows, and the extremes of every number
            picked += [r["id"] for r in episode.query(f'SELECT id FROM "{table}" WHERE {where} LIMIT 3', params)]
            for name, order in itertools.product(numbers, ("ASC", "DESC")):
                sql = f'SELECT id FROM "{table}" WHERE {where} ORDER BY "{name}" {order}, id LIMIT 1'
                picked += [r["id"] for r in episode.query(sql, params)]
        return list(dict.fromkeys(picked)) or ["missing"]

    def _field_values(self, entity: str, name: str, f: FieldSpec, episode: Episode) -> list[Any]:
        if f.type == "enum":
            return list(f.values or [])
        if f.type == "bool":
            return [True, False]
        if f.type in NUMERIC:
            return self._amounts(f)
        if f.type in ("date", "datetime"):  # around the clock's start: yesterday, today, soon, later
            moments = [self.world.epoch + timedelta(days=d) for d in (-1, 0, 1, 7)]
            return [m.date().isoformat() if f.type == "date" else m.isoformat() for m in moments]
        table = self.compiled.models[entity].table.name
        existing = [
            r[name] for r in episode.query(f'SELECT "{name}" FROM "{table}" WHERE "{name}" IS NOT NULL LIMIT 1')
        ]
        return [*self._fresh_texts(f), *existing]

    def _fresh_texts(self, f: FieldSpec) -> list[str]:
        if isinstance(f.generator, FakerGen):
            faker = Faker("en_US")
            faker.seed_instance(derive_seed(self.seed, "validate-text", f.generator.faker))
            return [
                str(getattr(faker, f.generator.faker)(**f.generator.args))[: f.max_length or None] for _ in range(2)
            ]
        return ["Validation sample"]

    def _amounts(self, f: FieldSpec) -> list[Any]:
        low = f.min if f.min is not None else 1
        high = f.max if f.max is not None else 100_000
        numbers = sorted({low, high, round((low + high) / 2), max(low, 1), min(high, 10_000_000)})
        if f.type == "money":
            return [n / 100 for n in numbers if n > 0] or [0.01]
        if f.type == "int":
            return [int(n) for n in numbers]
        return [float(n) for n in numbers]

    def _query_words(self, action: ActionSpec, episode: Episode) -> list[str]:
        model = self.compiled.models[action.entity]
        searchable = [n for n, f in model.spec.fields.items() if f.searchable]
        words = ["zzqx"]
        if searchable:
            rows = episode.query(f'SELECT "{searchable[0]}" AS v FROM "{model.table.name}" LIMIT 2')
            words += [str(r["v"]).split()[0] for r in rows if r["v"]]
        return words

    def _resolved(self, action: ActionSpec, args: dict[str, Any], episode: Episode) -> dict[str, Any]:
        """Owner arguments made concrete: the target row's own owner, or another one."""
        if not any(v in (_MATCH, _OTHER) for v in args.values()):
            return args
        model = self.compiled.models[action.entity]
        key = args.get(f"{action.entity}_id") or args.get(f"source_{action.entity}_id")
        rows = episode.query(f'SELECT * FROM "{model.table.name}" WHERE id = ?', (key,))
        resolved = dict(args)
        for name, value in args.items():
            if value not in (_MATCH, _OTHER):
                continue
            own = rows[0][name] if rows else "missing"
            resolved[name] = own if value == _MATCH else self._another(action.entity, name, own, episode)
        return resolved

    def _another(self, entity: str, name: str, own: Any, episode: Episode) -> Any:
        f = self.spec.entities[entity].fields[name]
        if f.type != "ref" or not f.entity:
            return f"{own}-other"
        table = self.compiled.models[f.entity].table.name
        rows = episode.query(f'SELECT id FROM "{table}" WHERE id != ? ORDER BY id LIMIT 1', (own,))
        return rows[0]["id"] if rows else "missing"


def owner_invariants(compiled: CompiledWorld) -> set[str]:
    return {i.error_name for i in compiled.spec.invariants if i.kind == "ownership"}


def field_problem(f: FieldSpec, value: Any) -> str | None:
    """What is wrong with a stored value for a field, or None."""
    if value is None:
        return None if f.optional else "is empty but not optional"
    if f.type == "enum" and value not in (f.values or []):
        return f"{value!r} is not one of {f.values}"
    if f.type in NUMERIC:
        if f.min is not None and value < f.min:
            return f"{value} is below the minimum {f.min:g}"
        if f.max is not None and value > f.max:
            return f"{value} is above the maximum {f.max:g}"
    if isinstance(value, str):
        return _text_problem(f, value)
    return None


def _text_problem(f: FieldSpec, value: str) -> str | None:
    if f.max_length is not None and len(value) > f.max_length:
        return f"is {len(value)} characters, more than {f.max_length}"
    if f.min_length is not None and len(value) < f.min_length:
        return f"is {len(value)} characters, fewer than {f.min_length}"
    pattern = f.pattern or {"date": ISO_DATE, "datetime": ISO_DATETIME}.get(f.type)
    if pattern and not re.search(pattern, value):
        return f"{value!r} does not match {pattern}"
    return None


def template_hash_in_subprocess(spec: dict[str, Any], seed: int, scale: str) -> str:
    """The template hash another Python process builds from the same spec."""
    done = subprocess.run(
        [sys.executable, "-m", "mcpsim.factory", "hash", "-", "--seed", str(seed), "--scale", scale],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        return f"error: {done.stderr.strip()[-500:]}"
    return done.stdout.strip()


def validate(
    compiled: CompiledWorld, *, seed: int = 0, scale: str = "small", processes: bool = True
) -> ValidationReport:
    return Validator(compiled, seed=seed, scale=scale).run(processes=processes)
