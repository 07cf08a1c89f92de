"""The workspace tools, one module per app. Importing a module registers its tools on the world;
this order is the order agents see them in. `mailbox` and `calendar` hold what the mail and
calendar tools share (rows to views, scheduling rules) and register nothing."""

from . import identity, mail, labels, events, availability, contacts, files  # noqa: F401, I001
