"""Searching the catalog, reading products, and the support tools (calculate, hand-off)."""

from __future__ import annotations


def test_a_product_lists_every_variant_with_price_stock_and_availability(shop):
    product = shop.row("SELECT * FROM products ORDER BY id LIMIT 1")
    details = shop.ok("get_product_details", product_id=product["id"])
    variants = shop.rows("SELECT * FROM variants WHERE product_id = ? ORDER BY rowid", product["id"])
    assert details.name == product["name"] and len(details.variants) == len(variants)
    for view, row in zip(details.variants, variants, strict=True):
        assert view.variant_id == row["id"] and view.price == row["price_cents"] / 100
        assert view.stock == row["stock"] and view.in_stock == (bool(row["available"]) and row["stock"] > 0)
        assert view.options and all(isinstance(v, str) for v in view.options.values())


def test_an_unknown_product_is_a_not_found_error(shop):
    shop.fails("get_product_details", "Product prod_000000 not found", product_id="prod_000000")


def test_search_matches_every_word_case_insensitively_and_reports_price_ranges(shop):
    product = shop.row("SELECT * FROM products ORDER BY id LIMIT 1")
    last_word = product["name"].split()[-1]
    results = shop.ok("search_products", query=f"{product['name'].split()[0].lower()} {last_word.upper()}")
    assert product["id"] in [p.product_id for p in results.products]
    hit = next(p for p in results.products if p.product_id == product["id"])
    prices = [
        r["price_cents"] for r in shop.rows("SELECT price_cents FROM variants WHERE product_id = ?", product["id"])
    ]
    assert (hit.min_price, hit.max_price) == (min(prices) / 100, max(prices) / 100)
    assert shop.ok("search_products", query="zzzz-no-such-thing").total_count == 0


def test_search_pages_through_results_and_bounds_the_page_size(shop):
    total = shop.value("SELECT COUNT(*) FROM products")
    first = shop.ok("search_products", limit=5)
    second = shop.ok("search_products", limit=5, offset=5)
    assert first.total_count == total and len(first.products) == 5
    assert not {p.product_id for p in first.products} & {p.product_id for p in second.products}
    result = shop.call("search_products", limit=1000)
    assert result.is_error and "less than or equal to 25" in result.error


def test_search_filters_by_category_and_stock(shop):
    categories = shop.ok("list_product_categories").categories
    assert sum(c.product_count for c in categories) == shop.value("SELECT COUNT(*) FROM products")
    category = categories[0]
    found = shop.ok("search_products", category=category.category.upper(), limit=25)
    assert found.total_count == category.product_count
    assert {p.category for p in found.products} == {category.category}
    shop.fails("search_products", "Unknown category 'Spaceships'", category="Spaceships")
    in_stock = shop.ok("search_products", in_stock_only=True, limit=25)
    assert in_stock.products and all(p.variants_in_stock > 0 for p in in_stock.products)
    expected = shop.value("SELECT COUNT(DISTINCT product_id) FROM variants WHERE available AND stock > 0")
    assert in_stock.total_count == expected


def test_search_treats_like_wildcards_as_plain_text(shop):
    assert shop.ok("search_products", query="%").total_count == 0
    assert shop.ok("search_products", query="_").total_count == 0


def test_search_counts_every_in_stock_variant(episode):
    product = episode.query(
        "SELECT product_id, count(*) AS n FROM variants WHERE available = 1 AND stock > 0 "
        "GROUP BY product_id HAVING n >= 2 ORDER BY n DESC LIMIT 1"
    )[0]
    name = episode.query("SELECT name FROM products WHERE id = ?", (product["product_id"],))[0]["name"]
    found = episode.call("search_products", {"query": name, "limit": 25})
    assert not found.is_error, found.error
    (hit,) = [p for p in found.value.products if p.product_id == product["product_id"]]
    assert hit.variants_in_stock == product["n"]
