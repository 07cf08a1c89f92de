"""Members and their payment methods: credit cards (some expired), gift cards, travel
certificates (active, used or expired), and gift cards nobody has redeemed yet."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from mcpsim.world import SeedContext

from ..rules import CERTIFICATE_VALIDITY_DAYS, gift_card_code, iso
from .airports import CARD_BRANDS, CARD_WEIGHTS, EMAIL_DOMAINS
from .network import Row


def _letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def build_users(ctx: SeedContext, count: int) -> tuple[list[Row], list[Row]]:
    rng, fake, now = ctx.rng, ctx.faker, ctx.now
    users: list[Row] = []
    methods: list[Row] = []
    emails: set[str] = set()
    for _ in range(count):
        first, last = fake.first_name(), fake.last_name()
        f, la = _letters(first), _letters(last)
        user_id = f"{f}_{la}_{ctx.ids.number('user', 4):04d}"
        local = rng.choice((f"{f}.{la}", f"{f}{la}", f"{f[0]}{la}", f"{f}_{la}"))
        email = f"{local}{rng.choice(('', str(rng.randint(1, 99))))}@{rng.choice(EMAIL_DOMAINS)}"
        while email in emails:
            email = f"{local}{rng.randint(100, 999)}@{rng.choice(EMAIL_DOMAINS)}"
        emails.add(email)
        born = ctx.birth_date(minimum_age=19, maximum_age=78)
        member_since = now - timedelta(days=rng.randint(60, 3650), minutes=rng.randint(0, 1439))
        users.append(
            {
                "id": user_id,
                "first_name": first,
                "last_name": last,
                "email": email,
                "phone": f"({rng.randint(201, 989)}) {rng.randint(200, 999)}-{rng.randint(0, 9999):04d}",
                "date_of_birth": born.isoformat(),
                "membership": rng.choices(("regular", "silver", "gold", "platinum"), (45, 25, 20, 10))[0],
                "frequent_flyer_number": ctx.ids.new("frequent_flyer"),
                "address_line1": fake.street_address(),
                "address_city": fake.city(),
                "address_state": fake.state_abbr(include_territories=False, include_freely_associated_states=False),
                "address_zip": fake.zipcode(),
                "created_at": iso(member_since),
            }
        )
        for n in range(rng.choice((1, 1, 1, 2, 2, 3))):
            expired = n > 0 and rng.random() < 0.3
            methods.append(
                {
                    "id": ctx.ids.new("credit_card"),
                    "user_id": user_id,
                    "kind": "credit_card",
                    "brand": rng.choices(CARD_BRANDS, CARD_WEIGHTS)[0],
                    "last4": f"{rng.randint(0, 9999):04d}",
                    "exp_month": rng.randint(1, 12),
                    "exp_year": rng.randint(2023, 2025) if expired else rng.randint(2027, 2031),
                    "status": "active",
                    "created_at": iso(member_since + timedelta(days=rng.randint(0, 50))),
                }
            )
        if rng.random() < 0.35:
            methods.append(
                {
                    "id": ctx.ids.new("gift_card"),
                    "user_id": user_id,
                    "kind": "gift_card",
                    "gift_card_code": gift_card_code(ctx.ids),
                    "balance_cents": rng.randrange(0, 501) * 100,
                    "status": "active",
                    "created_at": iso(now - timedelta(days=rng.randint(1, 400))),
                }
            )
        if rng.random() < 0.3:
            methods.append(
                certificate(
                    ctx,
                    user_id,
                    rng.choice((50, 100, 150, 200, 250, 300, 500)) * 100,
                    now - timedelta(days=rng.randint(5, 300)),
                    "goodwill",
                )
            )
        if rng.random() < 0.1:
            issued = now - timedelta(days=rng.randint(370, 500))
            methods.append(certificate(ctx, user_id, rng.choice((50, 100, 200)) * 100, issued, "goodwill"))
    return users, methods


def certificate(
    ctx: SeedContext, user_id: str, cents: int, issued: datetime, source: str, status: str | None = None
) -> Row:
    expires = (issued + timedelta(days=CERTIFICATE_VALIDITY_DAYS)).date().isoformat()
    return {
        "id": ctx.ids.new("certificate"),
        "user_id": user_id,
        "kind": "certificate",
        "balance_cents": 0 if status == "used" else cents,
        "status": status or ("expired" if expires < ctx.now.date().isoformat() else "active"),
        "expires_on": expires,
        "source": source,
        "created_at": iso(issued),
    }


def unredeemed_gift_cards(ctx: SeedContext, count: int) -> list[Row]:
    return [
        {
            "id": ctx.ids.new("gift_card"),
            "user_id": None,
            "kind": "gift_card",
            "gift_card_code": gift_card_code(ctx.ids),
            "balance_cents": ctx.rng.choice((25, 50, 75, 100, 150, 200, 250, 300)) * 100,
            "status": "active",
            "created_at": iso(ctx.now - timedelta(days=ctx.rng.randint(1, 120))),
        }
        for _ in range(count)
    ]
