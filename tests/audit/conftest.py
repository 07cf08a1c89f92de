"""The retail world and one pending order of its seeded shop, shared by the baseline tests."""

from __future__ import annotations

from typing import Any

import pytest

from mcpsim.engine._episode import Episode
from mcpsim.world._registry import load_world


@pytest.fixture(scope="module")
def world():
    return load_world("retail")


@pytest.fixture(scope="module")
def shop(world) -> dict[str, Any]:
    """A pending order of the seeded shop and its customer."""
    ep = Episode.create(world)
    try:
        row = ep.query(
            "SELECT o.id, c.email, c.id AS customer FROM orders o JOIN customers c "
            "ON c.id = o.customer_id WHERE o.status = 'pending' ORDER BY o.id LIMIT 1"
        )[0]
        return {"order": row["id"], "email": row["email"], "customer": row["customer"]}
    finally:
        ep.close()
