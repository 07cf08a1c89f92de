"""Tool modules of the bank world. Importing one registers its tools on the world; this order is
the order agents see them in."""

from . import customers, accounts, cards, payees, transfers, disputes, support  # noqa: F401, I001
