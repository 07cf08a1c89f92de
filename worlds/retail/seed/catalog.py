"""The seeded catalog: products drawn from the assortment's templates, each with a few variants."""

from __future__ import annotations

import itertools
import re

from mcpsim.world import SeedContext

from .catalog_data import LINES, TYPES, ProductType
from .rows import Row


def build_catalog(ctx: SeedContext, count: int, variants_per_product: tuple[int, int]) -> tuple[list[Row], list[Row]]:
    """`count` distinct products spread over the product types, each with a few variants."""
    rng = ctx.rng
    types = list(TYPES)
    rng.shuffle(types)
    lines_left = {t.name: rng.sample(LINES, len(LINES)) for t in types}
    products: list[Row] = []
    variants: list[Row] = []
    for n in range(count):
        kind = types[n % len(types)]
        if not lines_left[kind.name]:
            raise ValueError(f"the catalog has too few product names for {count} products")
        line = lines_left[kind.name].pop()
        product_id = ctx.ids.new("product")
        products.append(
            {
                "id": product_id,
                "name": f"{line} {kind.name}",
                "category": kind.category,
                "description": kind.blurb,
            }
        )
        variants += build_variants(ctx, kind, product_id, line, variants_per_product)
    return products, variants


def build_variants(
    ctx: SeedContext, kind: ProductType, product_id: str, line: str, bounds: tuple[int, int]
) -> list[Row]:
    rng = ctx.rng
    combos = list(itertools.product(*(axis.values for axis in kind.axes)))
    chosen = sorted(rng.sample(range(len(combos)), min(rng.randint(*bounds), len(combos))))
    base = rng.randint(*kind.price)
    prefix = (line[:2] + "".join(word[0] for word in re.findall(r"[A-Za-z]+", kind.name))).upper()
    rows = []
    for position, index in enumerate(chosen):
        values = combos[index]
        surcharge = sum(axis.surcharge.get(value, 0) for axis, value in zip(kind.axes, values, strict=True))
        jitter = rng.choice((0, 0, 0, 0, 1, 2, -1, 5))
        price_cents = max(base + surcharge + jitter, 2) * 100 - 1
        roll = rng.random()
        if roll < 0.07:  # discontinued
            available, stock = False, 0
        elif roll < 0.17:  # sold out for now
            available, stock = True, 0
        else:
            available, stock = True, rng.randint(3, 180)
        rows.append(
            {
                "id": ctx.ids.new("variant"),
                "product_id": product_id,
                "sku": f"{prefix}-{product_id[-6:]}-{position + 1:02d}",
                "options": {axis.name: value for axis, value in zip(kind.axes, values, strict=True)},
                "price_cents": price_cents,
                "stock": stock,
                "available": available,
            }
        )
    return rows
