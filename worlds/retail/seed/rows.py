"""Seed rows are plain dicts, bulk-inserted with `SeedContext.insert`."""

from typing import Any

Row = dict[str, Any]
