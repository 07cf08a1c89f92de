"""The airline tools, one module per group. Importing a module registers its tools on the world;
this order is the order agents see them in."""

from . import users, flights, booking, changes, cancellation, compensation, support  # noqa: F401, I001
