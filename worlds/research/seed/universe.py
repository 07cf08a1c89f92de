"""The fictional universe the corpus is written about: organisations with their executives, yearly
figures (some first published as preliminary and revised later), products (some repriced), and
acquisitions between them. Drawn from the world's seeded random and Faker only, so the same seed
gives the same universe on every machine; the task generator (`tasks/generate.py`) draws it again
to write tasks whose facts agree with the corpus."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

SECTORS = ["logistics", "biotech", "energy storage", "robotics", "semiconductors", "agritech", "fintech", "materials"]
SUFFIXES = ["Dynamics", "Labs", "Systems", "Analytics", "Holdings", "Works", "Industries", "Networks", "Biologics"]
PRODUCT_WORDS = ["Atlas", "Nimbus", "Vector", "Helix", "Quarry", "Beacon", "Lumen", "Tessera", "Orbit", "Strata"]


@dataclass
class Product:
    name: str
    launched: date
    price: float  # list price at launch, dollars
    new_price: float | None = None  # after a later repricing
    repriced: date | None = None


@dataclass
class Organisation:
    name: str
    sector: str
    city: str
    founded: int
    ceo: str  # the current chief executive
    former_ceo: str | None = None  # the chief executive the (older) profile names, if one left
    ceo_since: date | None = None
    ceo_prior_employer: str | None = None  # another organisation's name
    revenue23: float = 0.0  # $ millions, final
    revenue24: float = 0.0  # $ millions, final (the annual report)
    revenue24_preliminary: float | None = None  # first published, then revised
    headcount23: int = 0
    headcount24: int = 0
    products: list[Product] = field(default_factory=list)
    acquired: str | None = None  # the organisation it acquired
    acquisition_date: date | None = None
    acquisition_price: float | None = None  # $ millions
    docs: dict[str, str] = field(default_factory=dict)  # role -> document id (filled by the writer)


def _day(rng: random.Random, start: date, end: date) -> date:
    return start + timedelta(days=rng.randint(0, (end - start).days))


def _unique(draw: Any, taken: set[str]) -> str:
    for _ in range(1000):
        value = str(draw())
        if value not in taken:
            taken.add(value)
            return value
    raise RuntimeError("could not draw a unique value")


def _names(rng: random.Random, faker: Any, count: int) -> list[str]:
    """Organisation names; about one in five shares its first word with an earlier one (the
    distractor entities an agent must tell apart)."""
    taken: set[str] = set()
    names: list[str] = []
    for i in range(count):
        name = None
        if i and rng.random() < 0.2:
            stem = names[rng.randrange(len(names))].split()[0]
            if any(f"{stem} {suffix}" not in taken for suffix in SUFFIXES):  # else a stem of its own
                name = _unique(lambda stem=stem: f"{stem} {rng.choice(SUFFIXES)}", taken)
        if name is None:
            name = _unique(lambda: f"{faker.last_name()} {rng.choice(SUFFIXES)}", taken)
        names.append(name)
    return names


def _figures(rng: random.Random, org: Organisation) -> None:
    org.revenue23 = round(rng.uniform(40, 900), 1)
    org.revenue24 = round(org.revenue23 * rng.uniform(0.85, 1.35), 1)
    if rng.random() < 0.5:  # first published as preliminary, then revised in the annual report
        delta = round(rng.uniform(2, 25), 1) * rng.choice([-1, 1])
        org.revenue24_preliminary = round(max(org.revenue24 + delta, 5.0), 1)
        if org.revenue24_preliminary == org.revenue24:
            org.revenue24_preliminary = round(org.revenue24 + 3.3, 1)
    org.headcount23 = rng.randint(80, 9000)
    org.headcount24 = max(20, org.headcount23 + rng.randint(-400, 900))


def _products(rng: random.Random, org: Organisation, taken: set[str]) -> None:
    for _ in range(rng.randint(1, 3)):
        name = _unique(lambda: f"{rng.choice(PRODUCT_WORDS)} {rng.choice('KLMRSTVXZ')}{rng.randint(2, 99)}", taken)
        product = Product(
            name=name, launched=_day(rng, date(2023, 2, 1), date(2025, 6, 30)), price=rng.randint(49, 4999)
        )
        if rng.random() < 0.4:
            product.new_price = float(round(product.price * rng.uniform(0.6, 0.92)))
            product.repriced = _day(rng, product.launched + timedelta(days=60), date(2026, 4, 30))
        org.products.append(product)


def draw_universe(rng: random.Random, faker: Any, organisations: int) -> list[Organisation]:
    """The organisations of the universe, in a fixed order."""
    people: set[str] = set()
    products: set[str] = set()
    orgs: list[Organisation] = []
    for name in _names(rng, faker, organisations):
        org = Organisation(
            name=name,
            sector=rng.choice(SECTORS),
            city=faker.city(),
            founded=rng.randint(1952, 2019),
            ceo=_unique(faker.name, people),
        )
        _figures(rng, org)
        _products(rng, org, products)
        orgs.append(org)
    for org in orgs:
        if rng.random() < 0.35:  # a new chief executive, hired from another organisation
            org.former_ceo, org.ceo = org.ceo, _unique(faker.name, people)
            org.ceo_since = _day(rng, date(2025, 5, 1), date(2026, 3, 31))
            org.ceo_prior_employer = rng.choice([o.name for o in orgs if o is not org])
    free = list(range(len(orgs)))
    rng.shuffle(free)
    for a, b in zip(free[0::2], free[1::2], strict=False):  # disjoint pairs: acquirer, target
        if rng.random() < 0.3:
            acquirer, target = orgs[a], orgs[b]
            acquirer.acquired = target.name
            acquirer.acquisition_date = _day(rng, date(2024, 6, 1), date(2026, 2, 28))
            acquirer.acquisition_price = round(rng.uniform(20, 600), 1)
    return orgs
