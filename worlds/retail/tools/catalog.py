"""Catalog tools: searching products and reading a product's variants, prices and stock."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mcpsim.world import ToolContext, WorldError, dollars, sql

from .. import world
from ..inputs import ProductId
from ..tables import Product
from ..views import CategoryCount, CategoryList, ProductDetails, ProductSearchResults, ProductSummary, product_details


@world.tool(read_only=True, idempotent=True)
def get_product_details(ctx: ToolContext, product_id: ProductId) -> ProductDetails:
    """A product with all its variants: each variant's id, options (color, size...), price, units
    in stock and whether it is still available (a discontinued variant cannot be ordered)."""
    return product_details(ctx, sql.get(ctx, Product, product_id.strip()))


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
    where: list[str] = []
    params: list[Any] = []
    for word in query.split()[:10]:
        where.append("(name LIKE ? ESCAPE '\\' OR category LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\')")
        params += [_like(word)] * 3
    if category is not None:
        known = sql.scalars(ctx, "SELECT DISTINCT products.category FROM products")
        match = next((c for c in known if c.lower() == category.strip().lower()), None)
        if match is None:
            raise WorldError(f"Unknown category '{category}'; the categories are: {', '.join(sorted(known))}")
        where.append("category = ?")
        params.append(match)
    if in_stock_only:
        where.append(
            "EXISTS (SELECT 1 FROM variants WHERE variants.product_id = products.id"
            " AND variants.available AND variants.stock > 0)"
        )
    condition = " AND ".join(where)
    total = sql.scalar(ctx, "SELECT COUNT(*) FROM products" + (f" WHERE {condition}" if where else ""), params)
    products = sql.select(ctx, Product, condition, params, order="name, id", limit=limit, offset=offset)
    marks = ", ".join("?" * len(products))
    stats = {
        row[0]: row[1:]
        for row in sql.tuples(
            ctx,
            "SELECT product_id, MIN(price_cents), MAX(price_cents), COUNT(*),"
            " SUM(CASE WHEN available AND stock > 0 THEN 1 ELSE 0 END)"
            f" FROM variants WHERE product_id IN ({marks}) GROUP BY product_id",
            [p.id for p in products],
        )
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
    rows = sql.tuples(ctx, "SELECT category, COUNT(*) FROM products GROUP BY category ORDER BY category")
    return CategoryList(categories=[CategoryCount(category=c, product_count=n) for c, n in rows])
