"""Deterministic sources for worlds: seeded ids, derived seeds and the seed-time context.

Nothing here reads wall-clock time or global random state. An episode's clock and id counters
live in its database (see `mcpsim.sqlite`), so a clone or snapshot of the bytes carries them.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from faker import Faker
from sqlmodel import Session


def derive_seed(*parts: object) -> int:
    """A stable 64-bit seed from any parts (unlike hash(), independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


class IdGenerator:
    """Seeded, collision-free ids per namespace.

    The n-th id of a namespace is `(a * n + b) mod 10**digits`, with `a` coprime to 10: a
    bijection, so ids never repeat within 10**digits draws, yet look random. `a` and `b` come
    from the seed, so two worlds with different seeds hand out different ids.
    """

    def __init__(self, seed: int, counters: dict[str, int] | None = None) -> None:
        self.seed = seed
        self.counters: dict[str, int] = dict(counters or {})

    def number(self, namespace: str, digits: int = 7) -> int:
        n = self.counters.get(namespace, 0)
        self.counters[namespace] = n + 1
        modulus = 10**digits
        rng = random.Random(derive_seed(self.seed, namespace, digits))
        a = rng.randrange(1, modulus)
        while a % 2 == 0 or a % 5 == 0:
            a += 1
        b = rng.randrange(modulus)
        return (a * n + b) % modulus

    def code(self, namespace: str, prefix: str = "", digits: int = 7) -> str:
        """An id such as `#W0382915`: prefix plus a zero-padded seeded number."""
        return f"{prefix}{self.number(namespace, digits):0{digits}d}"


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
        self.rng = random.Random(derive_seed(self.seed, "rng"))
        self.faker = Faker("en_US")
        self.faker.seed_instance(derive_seed(self.seed, "faker"))
