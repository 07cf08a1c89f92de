"""The retail tools, one module per group. Importing a module registers its tools on the world;
this order is the order agents see them in."""

from . import customers, catalog, orders, order_changes, after_sales, support  # noqa: F401, I001
