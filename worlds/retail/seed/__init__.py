"""Fill a fresh retail database: catalog, customers with addresses and payment methods, and a
history of orders whose payments, shipments, returns and exchanges agree with their status.

Rows are built as dicts and bulk-inserted (the large scale has tens of thousands of rows). Only
`ctx.rng` and `ctx.faker` are random; every time is relative to `ctx.now`.
"""

from __future__ import annotations

from mcpsim.world import SeedContext

from .. import world
from ..tables import Address, Customer, PaymentMethod, Product, Variant
from .catalog import build_catalog
from .customers import build_customers, unclaimed_gift_cards
from .orders import OrderHistory


@world.seeder
def seed(ctx: SeedContext) -> None:
    params = ctx.params
    products, variants = build_catalog(ctx, params["products"], tuple(params["variants_per_product"]))
    customers, addresses, methods = build_customers(ctx, params["customers"])
    methods += unclaimed_gift_cards(ctx, params["gift_cards"])
    history = OrderHistory(ctx, customers, addresses, methods, products, variants)
    history.build(params["orders"])

    for table, rows in (
        (Product, products),
        (Variant, variants),
        (Customer, customers),
        (Address, addresses),
        (PaymentMethod, methods),
        *history.tables(),
    ):
        ctx.insert(table, rows)
