"""Catalog tools: searching products and reading a product's variants, prices and stock."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlalchemy import and_, case, exists, func, or_
from sqlmodel import col, select

from mcpsim.world import ToolContext, WorldError
from mcpsim.world.paging import page
from mcpsim.world.toolkit import dollars

from .. import world
from ..inputs import ProductId
from ..tables import Product, Variant
from ..views import CategoryCount, CategoryList, ProductDetails, ProductSearchResults, ProductSummary, product_details


@world.tool(read_only=True, idempotent=True)
def get_product_details(ctx: ToolContext, product_id: ProductId) -> ProductDetails:
    """A product with all its variants: each variant's id, options (color, size...), price, units
    in stock and whether it is still available (a discontinued variant cannot be ordered)."""
    return product_details(ctx.session, ctx.get(Product, product_id.strip()))


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@world.tool(read_only=True, idempotent=True)
def search_products(
    ctx: ToolContext,
    query: Annotated[
        str, Field(description="Words to look for in product names and descriptions; empty for all.", max_length=100)
    ] = "",
    category: Annotated[
        str | None, Field(description="Only this category (see list_product_categories).", max_length=60)
    ] = None,
    in_stock_only: Annotated[bool, Field(description="Only products with a variant in stock.")] = False,
    limit: Annotated[int, Field(ge=1, le=25, description="At most this many products (1-25).")] = 10,
    offset: Annotated[int, Field(ge=0, le=10_000, description="Skip this many products (for paging).")] = 0,
) -> ProductSearchResults:
    """Search the catalog, one page at a time, sorted by name. Every word of the query must appear
    in the product's name, category or description (case does not matter). Each result gives its
    price range and how many of its variants are in stock; get_product_details lists the variants."""
    session = ctx.session
    where = []
    for word in query.split()[:10]:
        pattern = _like(word)
        where.append(
            or_(
                col(Product.name).like(pattern, escape="\\"),
                col(Product.category).like(pattern, escape="\\"),
                col(Product.description).like(pattern, escape="\\"),
            )
        )
    if category is not None:
        known = session.exec(select(Product.category).distinct()).all()
        match = next((c for c in known if c.lower() == category.strip().lower()), None)
        if match is None:
            raise WorldError(f"Unknown category '{category}'; the categories are: {', '.join(sorted(known))}")
        where.append(col(Product.category) == match)
    if in_stock_only:
        in_stock = and_(col(Variant.product_id) == Product.id, col(Variant.available), col(Variant.stock) > 0)
        where.append(exists().where(in_stock))
    total, products = page(session, Product, where, [Product.name, Product.id], offset=offset, limit=limit)
    stats = {
        row[0]: row[1:]
        for row in session.exec(
            select(  # type: ignore[call-overload]  # sqlmodel types select() for at most four columns
                Variant.product_id,
                func.min(Variant.price_cents),
                func.max(Variant.price_cents),
                func.count(),
                func.sum(case((and_(col(Variant.available), col(Variant.stock) > 0), 1), else_=0)),
            )
            .where(col(Variant.product_id).in_([p.id for p in products]))
            .group_by(Variant.product_id)
        ).all()
    }
    results = []
    for product in products:
        low, high, count, in_stock_count = stats.get(product.id, (0, 0, 0, 0))
        results.append(
            ProductSummary.from_row(
                product,
                min_price=dollars(low),
                max_price=dollars(high),
                variant_count=count,
                variants_in_stock=int(in_stock_count or 0),
            )
        )
    return ProductSearchResults(total_count=total, offset=offset, products=results)


@world.tool(read_only=True, idempotent=True)
def list_product_categories(ctx: ToolContext) -> CategoryList:
    """The catalog's categories and how many products each has."""
    rows = ctx.session.exec(
        select(Product.category, func.count()).group_by(Product.category).order_by(Product.category)
    ).all()
    return CategoryList(categories=[CategoryCount(category=c, product_count=n) for c, n in rows])
