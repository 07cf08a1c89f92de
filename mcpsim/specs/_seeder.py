"""A compiled world's seeder: rows per entity at the chosen scale, drawn from the seeded Faker and
random sources of the `SeedContext` (never the wall clock), referenced entities first.

Two things keep the data a person reads believable across a catalogue: Faker is seeded per world
(the seed and the world's name), so no e-mail or phone number repeats in every world seeded with
the same number; and a text field whose generator is Faker's filler (`sentence`, `word`, `bs`,
`catch_phrase`) takes its words from the vocabulary of its kind of world (`_vocabularies`)."""

from __future__ import annotations

import random
import re
from datetime import timedelta
from typing import Any

from mcpsim.specs._lint import seeding_order
from mcpsim.specs._spec import (
    ChoiceGen,
    ConstGen,
    DateRangeGen,
    FakerGen,
    FieldSpec,
    RangeGen,
    RefGen,
    SpecError,
    WorldSpec,
)
from mcpsim.specs._tables import EntityModel
from mcpsim.specs._vocabularies import vocabularies
from mcpsim.world import SeedContext, derive_seed

UNIQUE_ATTEMPTS = 50
FILLER = frozenset({"sentence", "sentences", "paragraph", "paragraphs", "text", "texts", "word", "words"})
FILLER |= {"bs", "catch_phrase"}  # Faker's made-up business speak is filler too


class SeedError(SpecError):
    """A spec whose data cannot be generated (a unique field whose generator repeats itself, a
    generator that raises), with the field's path."""


def _generated(ctx: SeedContext, f: FieldSpec) -> Any:
    gen = f.generator
    if isinstance(gen, FakerGen):
        value: Any = getattr(ctx.faker, gen.faker)(**gen.args)
    elif isinstance(gen, ChoiceGen):
        value = ctx.rng.choices(gen.choices, weights=gen.weights)[0]
    elif isinstance(gen, RangeGen):
        low, high = gen.range
        value = (
            ctx.rng.randint(int(low), int(high)) if f.type in ("int", "money") else round(ctx.rng.uniform(low, high), 2)
        )
    elif isinstance(gen, DateRangeGen):
        moment = ctx.now + timedelta(days=ctx.rng.randint(*gen.days), seconds=ctx.rng.randint(0, 86_399))
        value = moment.date().isoformat() if f.type == "date" else moment.isoformat()
    elif isinstance(gen, ConstGen):
        value = gen.const
    else:
        value = f.default
    return _coerced(f, value)


def _coerced(f: FieldSpec, value: Any) -> Any:
    if value is None:
        return None
    if f.type in ("str", "enum", "date", "datetime"):
        text = str(value)
        return text[: f.max_length] if f.max_length else text
    if f.type in ("int", "money"):
        return int(value)
    if f.type == "float":
        return float(value)
    if f.type == "bool":
        return bool(value)
    return value


class Vocabulary:
    """The words of one world for its text fields: for each field, the first variant of
    `_vocabularies` whose `when` words name the world or the field's entity."""

    def __init__(self, spec: WorldSpec, rng: random.Random) -> None:
        self.rng = rng
        kind = re.sub(r"_\d+$", "", spec.name)  # a catalogue world's name is its blueprint's and a number
        self.world = {kind, *kind.split("_"), *spec.entities}

    def variant(self, entity: str, name: str) -> dict[str, Any] | None:
        words = self.world | {entity, *entity.split("_")}
        variants = vocabularies().get(name, [])
        return next((v for v in variants if not v.get("when") or words & set(v["when"])), None)

    def text(self, entity: str, name: str) -> str | None:
        """A value for the field, or None where the vocabulary has no words for it."""
        variant = self.variant(entity, name)
        if variant is None:
            return None
        pattern = self.rng.choice(variant["patterns"])
        slots = {slot: self.rng.choice(words) for slot, words in sorted(variant["slots"].items())}
        return str(pattern.format(**slots))


class Seeder:
    def __init__(self, spec: WorldSpec, models: dict[str, EntityModel]) -> None:
        self.spec = spec
        self.models = models
        self.vocabulary: Vocabulary | None = None

    def __call__(self, ctx: SeedContext) -> None:
        ctx.faker.seed_instance(derive_seed(ctx.seed, "faker", self.spec.name))
        self.vocabulary = Vocabulary(self.spec, random.Random(derive_seed(ctx.seed, "vocabulary", self.spec.name)))
        ids: dict[str, list[str]] = {}
        for entity in seeding_order(self.spec):
            rows = self._rows(ctx, entity, ctx.params.get(entity, 0), ids)
            ids[entity] = [r["id"] for r in rows]
            ctx.insert(self.models[entity].table, rows)

    def _rows(self, ctx: SeedContext, entity: str, count: int, ids: dict[str, list[str]]) -> list[dict[str, Any]]:
        e = self.spec.entities[entity]
        seen: dict[str, set[Any]] = {name: set() for name, f in e.fields.items() if f.unique}
        rows = []
        for _ in range(count):
            row: dict[str, Any] = {"id": ctx.ids.new(entity)}
            for name, f in e.fields.items():
                row[name] = self._value(ctx, entity, name, f, ids, seen)
            rows.append(row)
        return rows

    def _value(
        self,
        ctx: SeedContext,
        entity: str,
        name: str,
        f: FieldSpec,
        ids: dict[str, list[str]],
        seen: dict[str, set[Any]],
    ) -> Any:
        if f.type == "ref" and (f.generator is None or isinstance(f.generator, RefGen)):
            return self._reference(ctx, entity, name, f, ids)
        if f.generator is None and self._is_state(entity, name) and f.default is None:
            machine = self.spec.entities[entity].state_machine
            return machine.initial if machine else None
        if name not in seen:
            return self._generated(ctx, entity, name, f)
        for _ in range(UNIQUE_ATTEMPTS):
            value = self._generated(ctx, entity, name, f)
            if value not in seen[name]:
                seen[name].add(value)
                return value
        raise SeedError(
            f"entities.{entity}.fields.{name}: unique, but its generator gave {UNIQUE_ATTEMPTS} repeats in a row"
        )

    def _generated(self, ctx: SeedContext, entity: str, name: str, f: FieldSpec) -> Any:
        """A field's value; a generator that raises is the spec's error, at the field's path."""
        try:
            return self._drawn(ctx, entity, name, f)
        except Exception as exc:
            raise SeedError(
                f"entities.{entity}.fields.{name}.generator: {type(exc).__name__}: {str(exc)[:300]}"
            ) from None

    def _drawn(self, ctx: SeedContext, entity: str, name: str, f: FieldSpec) -> Any:
        """A field's value: words of the world's vocabulary in place of Faker's filler."""
        if isinstance(f.generator, FakerGen) and f.generator.faker in FILLER and self.vocabulary is not None:
            text = self.vocabulary.text(entity, name)
            if text is not None:
                return _coerced(f, text)
        return _generated(ctx, f)

    def _reference(self, ctx: SeedContext, entity: str, name: str, f: FieldSpec, ids: dict[str, list[str]]) -> Any:
        pool = ids.get(f.entity or "", [])
        if not pool:
            if f.optional:
                return None
            raise SeedError(f"entities.{entity}.fields.{name}: refers to {f.entity}, which has no rows at this scale")
        return ctx.rng.choice(pool)

    def _is_state(self, entity: str, name: str) -> bool:
        machine = self.spec.entities[entity].state_machine
        return machine is not None and machine.field == name
