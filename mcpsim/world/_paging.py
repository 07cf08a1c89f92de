"""Paged listings: the rows of one page and how many match in all, in two queries.

total, rows = page(ctx.session, Order, where, [col(Order.placed_at).desc()], offset=offset, limit=limit)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy import func
from sqlmodel import Session, SQLModel, select

RowT = TypeVar("RowT", bound=SQLModel)


def page(
    session: Session,
    model: type[RowT],
    where: Sequence[Any],
    order_by: Sequence[Any],
    *,
    offset: int = 0,
    limit: int,
) -> tuple[int, list[RowT]]:
    """How many rows of `model` meet every condition of `where`, and those of them from `offset`
    on (at most `limit`) in `order_by` order; `order_by` should end with a unique column so that
    pages never overlap."""
    total = session.exec(select(func.count()).select_from(model).where(*where)).one()
    rows = session.exec(select(model).where(*where).order_by(*order_by).offset(offset).limit(limit)).all()
    return total, list(rows)
