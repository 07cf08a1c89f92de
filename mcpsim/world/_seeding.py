"""Deterministic sources for worlds: seeded ids, derived seeds and the seed-time context.

Nothing here reads wall-clock time or global random state. An episode's clock and id counters
live in its database (see `mcpsim.engine._store`), so a clone or snapshot of the bytes carries them.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Table
from sqlmodel import Session

from mcpsim._yaml import load_trusted

if TYPE_CHECKING:
    from faker import Faker

IdFormats = Mapping[str, tuple[str, int]]  # namespace -> (prefix, digits), e.g. {"order": ("#W", 7)}


def load_seed_data(path: Path) -> dict[str, Any]:
    """A world's seed data kept as data: a YAML (or JSON) file in the world package, whose top
    level maps section names to values. The world version hashes the file like the code."""
    data = load_trusted(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"seed data {path} must map section names to values, not hold a {type(data).__name__}")
    return data


def derive_seed(*parts: object) -> int:
    """A stable 64-bit seed from any parts (unlike hash(), independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


class _KeyedPermutation:
    """A seeded bijection of [0, 10**digits): a 4-round Feistel network over the smallest even
    number of bits that covers the range, with cycle-walking back into it. Consecutive inputs
    give unrelated outputs, so ids reveal neither their order nor their neighbours."""

    def __init__(self, key: int, digits: int) -> None:
        self.modulus: int = 10**digits
        bits = max(2, (self.modulus - 1).bit_length())
        self.half: int = (bits + 1) // 2
        self.mask: int = (1 << self.half) - 1
        rng = random.Random(key)
        self.round_keys = [rng.getrandbits(32) | 1 for _ in range(4)]

    def _round(self, value: int, key: int) -> int:
        return (((value * 0x9E3779B1) ^ key) * 0x85EBCA6B >> 7) & self.mask

    def _encrypt(self, x: int) -> int:
        left, right = x >> self.half, x & self.mask
        for key in self.round_keys:
            left, right = right, left ^ self._round(right, key)
        return (left << self.half) | right

    def __call__(self, n: int) -> int:
        x = self._encrypt(n)
        while x >= self.modulus:  # the walk ends: x's cycle contains n, which is < modulus
            x = self._encrypt(x)
        return x


class IdGenerator:
    """Seeded, collision-free ids per namespace: the n-th id of a namespace is a keyed
    permutation of n, so ids never repeat within 10**digits draws and look random. The key
    comes from the seed and the namespace; the counters are the only state (kept in the
    episode's database).

    With `record`, `drawn` lists every id handed out, as (namespace, id): the number for
    `number`, the whole code for `code`. An episode stores them with the call that drew them,
    so grading knows exactly which values are generated ids (they depend on the order of the
    writes that drew them) without guessing from keys. Seeding does not record: it draws
    millions."""

    def __init__(
        self,
        seed: int,
        counters: dict[str, int] | None = None,
        *,
        record: bool = False,
        formats: IdFormats | None = None,
    ) -> None:
        self.seed = seed
        self.formats: IdFormats = formats or {}
        self.counters: dict[str, int] = dict(counters or {})
        self.record = record
        self.drawn: list[tuple[str, int | str]] = []
        self._permutations: dict[tuple[str, int], _KeyedPermutation] = {}

    def number(self, namespace: str, digits: int = 7) -> int:
        n = self._next(namespace, digits)
        if self.record:
            self.drawn.append((namespace, n))
        return n

    def new(self, namespace: str) -> str:
        """The next id of a namespace in the world's declared format (`World(id_formats=...)`)."""
        try:
            prefix, digits = self.formats[namespace]
        except KeyError:
            known = ", ".join(sorted(self.formats)) or "none declared"
            raise KeyError(f"no id format for {namespace!r} (World(id_formats=...) declares: {known})") from None
        return self.code(namespace, prefix, digits)

    def code(self, namespace: str, prefix: str = "", digits: int = 7) -> str:
        """An id such as `#W0382915`: prefix plus a zero-padded seeded number."""
        code = f"{prefix}{self._next(namespace, digits):0{digits}d}"
        if self.record:
            self.drawn.append((namespace, code))
        return code

    def _next(self, namespace: str, digits: int) -> int:
        n = self.counters.get(namespace, 0)
        if n >= 10**digits:
            raise OverflowError(f"id namespace {namespace!r} is exhausted ({10**digits} ids of {digits} digits)")
        self.counters[namespace] = n + 1
        key = (namespace, digits)
        if (perm := self._permutations.get(key)) is None:
            perm = self._permutations[key] = _KeyedPermutation(derive_seed(self.seed, namespace, digits), digits)
        return perm(n)


@dataclass
class SeedContext:
    """Everything a world's seed function may use to build its data.

    `params` are the chosen scale's parameters as the world declared them (for example
    `{"customers": 500}`); `now` is the virtual time at which the episode starts.
    """

    session: Session
    seed: int
    scale: str
    params: dict[str, Any]
    now: datetime
    ids: IdGenerator
    rng: random.Random = field(init=False)
    faker: Faker = field(init=False)

    def __post_init__(self) -> None:
        from faker import Faker  # imported here: only template builds need it, not served episodes

        self.rng = random.Random(derive_seed(self.seed, "rng"))
        self.faker = Faker("en_US")
        self.faker.seed_instance(derive_seed(self.seed, "faker"))

    def insert(self, table: Table | type[Any], rows: Iterable[Mapping[str, Any]]) -> int:
        """Bulk-insert plain rows (dicts) into a table or SQLModel class through the driver: several
        times faster than the ORM at the large scales. A column a row leaves out is NULL; JSON
        columns are serialised here. Returns the number of rows."""
        table = getattr(table, "__table__", table)
        columns = list(table.columns)
        json_columns = {c.name for c in columns if isinstance(c.type, JSON)}
        names = ", ".join(f'"{c.name}"' for c in columns)
        sql = f'INSERT INTO "{table.name}" ({names}) VALUES ({", ".join("?" for _ in columns)})'
        values = [
            tuple(json.dumps(row.get(c.name)) if c.name in json_columns else row.get(c.name) for c in columns)
            for row in rows
        ]
        if values:
            self.session.connection().exec_driver_sql(sql, values)
        return len(values)

    def birth_date(self, minimum_age: int = 0, maximum_age: int = 115) -> date:
        """A birth date for someone aged `minimum_age` to `maximum_age` at the world's epoch.

        Use this, never Faker's `date_of_birth`: Faker's counts ages from the wall clock, so the
        data would move a day per day. It draws one number from the Faker instance's random
        source (as Faker's own does), so the names and addresses drawn after it do not move."""
        if not 0 <= minimum_age <= maximum_age:
            raise ValueError(f"ages must satisfy 0 <= minimum_age <= maximum_age, got {minimum_age}, {maximum_age}")
        today = self.now.date()
        start, end = _years_before(today, maximum_age + 1), _years_before(today, minimum_age)
        epoch = datetime(1970, 1, 1)
        seconds = self.faker.random.uniform(
            (datetime.combine(start, datetime.min.time()) - epoch).total_seconds(),
            (datetime.combine(end, datetime.min.time()) - epoch).total_seconds(),
        )
        born = (epoch + timedelta(seconds=seconds)).date()
        return born if born != start else born + timedelta(days=1)


def _years_before(day: date, years: int) -> date:
    """The same calendar day `years` earlier (29 February becomes 1 March in a common year)."""
    try:
        return day.replace(year=day.year - years)
    except ValueError:
        return day.replace(year=day.year - years, month=3, day=1)
