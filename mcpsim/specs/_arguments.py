"""Arguments for a compiled world's tools, drawn from its seeded data: ids spread over states and
numeric extremes, enum values, numeric bounds, dates around the clock, fresh and existing text,
and owner arguments that name the row's own owner or someone else's. Validation drives the tools
with them; the task generator looks for its plans among them."""

from __future__ import annotations

import itertools
import random
from datetime import timedelta
from typing import Any

from faker import Faker

from mcpsim.engine import Episode
from mcpsim.specs._compiler import CompiledWorld
from mcpsim.specs._lint import amount_field, owner_fields
from mcpsim.specs._seeder import FILLER, Vocabulary
from mcpsim.specs._spec import NUMERIC, ActionSpec, FakerGen, FieldSpec
from mcpsim.world import derive_seed

MAX_CANDIDATES = 200  # argument combinations tried per action before sampling
MATCH, OTHER = "\x00owner", "\x00other"  # an owner argument: the row's own owner, or someone else


class Arguments:
    """Argument candidates for the tools of one compiled world."""

    def __init__(self, compiled: CompiledWorld, *, seed: int, purpose: str = "validate") -> None:
        self.compiled = compiled
        self.spec = compiled.spec
        self.world = compiled.world
        self.seed = seed
        self.rng = random.Random(derive_seed(seed, purpose, compiled.spec.digest()))
        self._faker: Faker | None = None

    def candidates(self, action: ActionSpec, episode: Episode) -> list[dict[str, Any]]:
        return self.combinations(self.parameter_values(action, episode))

    def combinations(self, params: dict[str, list[Any]]) -> list[dict[str, Any]]:
        """Every combination of the values (a seeded sample of `MAX_CANDIDATES` past that)."""
        names = list(params)
        combos = [dict(zip(names, values, strict=True)) for values in itertools.product(*params.values())]
        if len(combos) > MAX_CANDIDATES:
            combos = self.rng.sample(combos, MAX_CANDIDATES)
        return combos

    def parameter_values(self, action: ActionSpec, episode: Episode) -> dict[str, list[Any]]:
        tool = self.world.tools[action.name]
        model = self.compiled.models[action.entity]
        owners = set(owner_fields(self.spec, action))
        values: dict[str, list[Any]] = {}
        for p in tool.parameters:
            if p.name in owners:
                values[p.name] = [MATCH, OTHER]
            elif p.name == "limit":
                values[p.name] = [5]
            elif p.name == "offset":
                values[p.name] = [0]
            elif p.name == "query":
                values[p.name] = self._query_words(action, episode)
            elif p.name == "amount" and (moved := amount_field(action)) is not None:
                values[p.name] = self._amounts(model.spec.fields[moved])
            elif (entity := self.entity_of(action, p.name)) is not None:
                values[p.name] = self._row_ids(entity, episode)
            else:
                f = model.spec.fields[p.name]
                optional = p.default is None
                values[p.name] = self._field_values(action.entity, p.name, f, episode) + ([None] if optional else [])
        return values

    def entity_of(self, action: ActionSpec, name: str) -> str | None:
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
        return [*self._fresh_texts(f, entity, name), *existing]

    def _fresh_texts(self, f: FieldSpec, entity: str, name: str) -> list[str]:
        """Two new texts for a field: the world's own words for Faker's filler, else Faker's, drawn
        per world (the spec's name), so two worlds never ask for the same e-mail."""
        spec = self.compiled.spec
        if isinstance(f.generator, FakerGen) and f.generator.faker in FILLER:
            words = Vocabulary(spec, random.Random(derive_seed(self.seed, "validate-text", spec.name, entity, name)))
            drawn = [words.text(entity, name) for _ in range(2)]
            if all(drawn):
                return [str(t)[: f.max_length or None] for t in drawn]
        if isinstance(f.generator, FakerGen):
            if self._faker is None:  # built once (it loads every provider); seeded again for each field
                self._faker = Faker("en_US")
            faker = self._faker
            faker.seed_instance(derive_seed(self.seed, "validate-text", f.generator.faker, spec.name))
            try:
                return [
                    str(getattr(faker, f.generator.faker)(**f.generator.args))[: f.max_length or None] for _ in range(2)
                ]
            except Exception:  # the seeder reports a generator that raises, at the field's path
                return ["Validation sample"]
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

    def resolved(self, action: ActionSpec, args: dict[str, Any], episode: Episode) -> dict[str, Any]:
        """Owner arguments made concrete: the target row's own owner, or another one."""
        if not any(v in (MATCH, OTHER) for v in args.values()):
            return args
        model = self.compiled.models[action.entity]
        key = args.get(f"{action.entity}_id") or args.get(f"source_{action.entity}_id")
        rows = episode.query(f'SELECT * FROM "{model.table.name}" WHERE id = ?', (key,))
        resolved = dict(args)
        for name, value in args.items():
            if value not in (MATCH, OTHER):
                continue
            own = rows[0][name] if rows else "missing"
            resolved[name] = own if value == MATCH else self._another(action.entity, name, own, episode)
        return resolved

    def _another(self, entity: str, name: str, own: Any, episode: Episode) -> Any:
        f = self.spec.entities[entity].fields[name]
        if f.type != "ref" or not f.entity:
            return f"{own}-other"
        table = self.compiled.models[f.entity].table.name
        rows = episode.query(f'SELECT id FROM "{table}" WHERE id != ? ORDER BY id LIMIT 1', (own,))
        return rows[0]["id"] if rows else "missing"
