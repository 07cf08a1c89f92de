"""The seeded customers: contact details, address books and payment methods (cards, PayPal and
gift cards), and the gift cards sold but not yet redeemed."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from mcpsim.world import SeedContext, iso

from ..rules import gift_card_code
from .rows import Row

CARD_BRANDS = ("Visa", "Mastercard", "American Express", "Discover")
CARD_WEIGHTS = (50, 30, 12, 8)


def build_customers(ctx: SeedContext, count: int) -> tuple[list[Row], list[Row], list[Row]]:
    rng, fake, now = ctx.rng, ctx.faker, ctx.now
    customers: list[Row] = []
    addresses: list[Row] = []
    methods: list[Row] = []
    emails: set[str] = set()
    places = Places(ctx, count)
    for _ in range(count):
        first, last = fake.first_name(), fake.last_name()
        customer_id = ctx.ids.new("customer")
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
            "id": self.ctx.ids.new("address"),
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
                "id": ctx.ids.new("payment_method"),
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
                "id": ctx.ids.new("payment_method"),
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
        "id": ctx.ids.new("payment_method"),
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
