"""What tools return: pydantic models built from table rows in one call.

    class OrderView(RowView):
        id_field = "order_id"          # the view's name for the row's primary key `id`
        order_id: str
        status: str
        total: float

    OrderView.from_row(order, total=dollars(order.total_cents))

Every field not given as a keyword is read from the row's attribute of the same name (the
`id_field` from `row.id`); a field the row lacks and the call does not give is an error naming it,
so a view cannot silently return a default for data it never read.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar, Self, TypeVar

from pydantic import BaseModel

V = TypeVar("V", bound=BaseModel)


@cache
def _fields(cls: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """A view's fields, each with the row attribute it reads (its `id_field` reads `id`): made
    once per view class."""
    id_field = getattr(cls, "id_field", None)
    return tuple((name, "id" if name == id_field else name) for name in cls.model_fields)


def build_view(cls: type[V], row: Any, values: dict[str, Any]) -> V:
    """`cls` from `row` and the computed `values` (`RowView.from_row`'s rules, for any model
    with an optional `id_field`)."""
    fields = _fields(cls)
    data: dict[str, Any] = {}
    given = 0
    for name, source in fields:
        if name in values:
            data[name] = values[name]
            given += 1
        else:
            try:
                data[name] = getattr(row, source)
            except AttributeError:
                raise TypeError(
                    f"{cls.__name__}.from_row: {type(row).__name__} has no {source!r}; pass {name}=..."
                ) from None
    if given != len(values):
        unknown = set(values) - {name for name, _ in fields}
        raise TypeError(f"{cls.__name__}.from_row: no field(s) {', '.join(sorted(unknown))}")
    return cls(**data)


class RowView(BaseModel):
    """A tool result shaped from a row: `View.from_row(row, **computed)`."""

    id_field: ClassVar[str | None] = None

    @classmethod
    def from_row(cls, row: Any, /, **values: Any) -> Self:
        return build_view(cls, row, values)

    @classmethod
    def from_rows(cls, rows: Any, /) -> list[Self]:
        """One view per row, with nothing computed."""
        return [build_view(cls, row, {}) for row in rows]
