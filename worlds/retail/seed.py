"""Fill a fresh retail database: catalog, customers with addresses and payment methods, and a
history of orders whose payments, shipments, returns and exchanges agree with their status.

Rows are built as dicts and bulk-inserted (the large scale has tens of thousands of rows). Only
`ctx.rng` and `ctx.faker` are random; every time is relative to `ctx.now`.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, Connection, Table

from mcpsim.world.seeding import SeedContext

from .catalog_data import LINES, TYPES, ProductType
from .common import gift_card_code, iso, new_id
from .seed_orders import OrderHistory
from .tables import Address, Customer, PaymentMethod, Product, Variant

Row = dict[str, Any]

CARD_BRANDS = ("Visa", "Mastercard", "American Express", "Discover")
CARD_WEIGHTS = (50, 30, 12, 8)


def seed(ctx: SeedContext) -> None:
    params = ctx.params
    products, variants = build_catalog(ctx, params["products"], tuple(params["variants_per_product"]))
    customers, addresses, methods = build_customers(ctx, params["customers"])
    methods += unclaimed_gift_cards(ctx, params["gift_cards"])
    history = OrderHistory(ctx, customers, addresses, methods, products, variants)
    history.build(params["orders"])

    connection = ctx.session.connection()
    for table, rows in (
        (Product, products),
        (Variant, variants),
        (Customer, customers),
        (Address, addresses),
        (PaymentMethod, methods),
        *history.tables(),
    ):
        bulk_insert(connection, table.__table__, rows)  # type: ignore[attr-defined]


def bulk_insert(connection: Connection, table: Table, rows: list[Row]) -> None:
    """Insert plain rows through the driver: several times faster than SQLAlchemy's executemany
    at the large scale. A column a row leaves out is NULL; JSON columns are serialized here."""
    if not rows:
        return
    columns = list(table.columns)
    json_columns = {c.name for c in columns if isinstance(c.type, JSON)}
    names = ", ".join(f'"{c.name}"' for c in columns)
    sql = f'INSERT INTO "{table.name}" ({names}) VALUES ({", ".join("?" for _ in columns)})'
    values = [
        tuple(json.dumps(row.get(c.name)) if c.name in json_columns else row.get(c.name) for c in columns)
        for row in rows
    ]
    connection.exec_driver_sql(sql, values)


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
        product_id = new_id(ctx.ids, "product")
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
                "id": new_id(ctx.ids, "variant"),
                "product_id": product_id,
                "sku": f"{prefix}-{product_id[-6:]}-{position + 1:02d}",
                "options": {axis.name: value for axis, value in zip(kind.axes, values, strict=True)},
                "price_cents": price_cents,
                "stock": stock,
                "available": available,
            }
        )
    return rows


def build_customers(ctx: SeedContext, count: int) -> tuple[list[Row], list[Row], list[Row]]:
    rng, fake, now = ctx.rng, ctx.faker, ctx.now
    customers: list[Row] = []
    addresses: list[Row] = []
    methods: list[Row] = []
    emails: set[str] = set()
    places = Places(ctx, count)
    for _ in range(count):
        first, last = fake.first_name(), fake.last_name()
        customer_id = new_id(ctx.ids, "customer")
        created = now - timedelta(days=rng.randint(200, 2400), seconds=rng.randint(0, 86_399))
        email = unique_email(ctx, first, last, emails)
        own_addresses = [places.address(customer_id) for _ in range(1 + (rng.random() < 0.35) + (rng.random() < 0.1))]
        addresses += own_addresses
        customers.append(
            {
                "id": customer_id,
                "first_name": first,
                "last_name": last,
                "email": email,
                "phone": f"({rng.randint(201, 989)}) {rng.randint(200, 999)}-{rng.randint(0, 9999):04d}",
                "default_address_id": own_addresses[0]["id"],
                "created_at": iso(created),
            }
        )
        methods += build_payment_methods(ctx, customer_id, email, created)
    return customers, addresses, methods


def unique_email(ctx: SeedContext, first: str, last: str, taken: set[str]) -> str:
    rng = ctx.rng
    first_part = re.sub(r"[^a-z]", "", first.lower())
    last_part = re.sub(r"[^a-z]", "", last.lower())
    domain = ctx.faker.free_email_domain()
    local = rng.choice(
        (
            f"{first_part}.{last_part}",
            f"{first_part}{last_part}{rng.randint(1, 99)}",
            f"{first_part[0]}{last_part}",
            f"{first_part}_{last_part}{rng.randint(1, 999)}",
        )
    )
    email = f"{local}@{domain}"
    suffix = 2
    while email in taken:
        email = f"{local}{suffix}@{domain}"
        suffix += 1
    taken.add(email)
    return email


class Places:
    """US addresses. Street and city names come from pools drawn from Faker once (Faker's address
    formatting dominates seeding time at the large scale); numbers, states and ZIPs vary freely."""

    POOL = 1_500

    def __init__(self, ctx: SeedContext, customers: int) -> None:
        self.ctx = ctx
        size = max(1, min(customers, self.POOL))
        self.streets = [ctx.faker.street_name() for _ in range(size)]
        self.cities = [ctx.faker.city() for _ in range(size)]

    def address(self, customer_id: str) -> Row:
        rng, fake = self.ctx.rng, self.ctx.faker
        state = fake.state_abbr(include_territories=False)
        return {
            "id": new_id(self.ctx.ids, "address"),
            "customer_id": customer_id,
            "line1": f"{rng.randint(1, 9999)} {rng.choice(self.streets)}",
            "line2": fake.secondary_address() if rng.random() < 0.25 else "",
            "city": rng.choice(self.cities),
            "state": state,
            "zip": fake.zipcode_in_state(state),
            "country": "US",
        }


def build_payment_methods(ctx: SeedContext, customer_id: str, email: str, since: datetime) -> list[Row]:
    rng, now = ctx.rng, ctx.now
    rows: list[Row] = []

    def added() -> str:
        return iso(since + (now - since) * rng.random() * 0.5)

    cards = rng.choices((0, 1, 2), weights=(15, 65, 20))[0]
    for _ in range(cards):
        rows.append(
            {
                "id": new_id(ctx.ids, "payment_method"),
                "customer_id": customer_id,
                "kind": "credit_card",
                "brand": rng.choices(CARD_BRANDS, weights=CARD_WEIGHTS)[0],
                "last4": f"{rng.randint(0, 9999):04d}",
                "exp_month": rng.randint(1, 12),
                "exp_year": now.year + rng.randint(-1, 5),
                "created_at": added(),
            }
        )
    if rng.random() < 0.35 or not rows:
        rows.append(
            {
                "id": new_id(ctx.ids, "payment_method"),
                "customer_id": customer_id,
                "kind": "paypal",
                "paypal_email": email,
                "created_at": added(),
            }
        )
    if rng.random() < 0.3:
        rows.append(gift_card_row(ctx, customer_id, added()))
    return rows


def gift_card_row(ctx: SeedContext, customer_id: str | None, created_at: str) -> Row:
    rng = ctx.rng
    balance = rng.choice((0, rng.randint(5, 60) * 100, rng.randint(1_000, 40_000)))
    return {
        "id": new_id(ctx.ids, "payment_method"),
        "customer_id": customer_id,
        "kind": "gift_card",
        "gift_card_code": gift_card_code(ctx.ids),
        "balance_cents": balance,
        "created_at": created_at,
    }


def unclaimed_gift_cards(ctx: SeedContext, count: int) -> list[Row]:
    """Gift cards sold but not yet added to any account; a customer can redeem one by its code."""
    rows = []
    for _ in range(count):
        row = gift_card_row(ctx, None, iso(ctx.now - timedelta(days=ctx.rng.randint(1, 300))))
        row["balance_cents"] = ctx.rng.choice((2_500, 5_000, 7_500, 10_000, 15_000, 20_000))
        rows.append(row)
    return rows
