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

from typing import Any, ClassVar, Self

from pydantic import BaseModel

_MISSING = object()


class RowView(BaseModel):
    """A tool result shaped from a row: `View.from_row(row, **computed)`."""

    id_field: ClassVar[str | None] = None

    @classmethod
    def from_row(cls, row: Any, /, **values: Any) -> Self:
        data: dict[str, Any] = {}
        for name in cls.model_fields:
            if name in values:
                data[name] = values[name]
                continue
            source = "id" if name == cls.id_field else name
            value = getattr(row, source, _MISSING)
            if value is _MISSING:
                raise TypeError(f"{cls.__name__}.from_row: {type(row).__name__} has no {source!r}; pass {name}=...")
            data[name] = value
        unknown = set(values) - set(cls.model_fields)
        if unknown:
            raise TypeError(f"{cls.__name__}.from_row: no field(s) {', '.join(sorted(unknown))}")
        return cls(**data)

    @classmethod
    def from_rows(cls, rows: Any, /) -> list[Self]:
        """One view per row, with nothing computed."""
        return [cls.from_row(row) for row in rows]
