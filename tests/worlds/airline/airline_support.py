"""Helpers the airline tests share (a module with a unique name, so it never collides with another
folder's conftest on sys.path)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any


def refs(*flights: dict[str, Any]) -> list[dict[str, Any]]:
    """Flight references as the tools take them."""
    return [{"flight_number": f["flight_number"], "date": f["date"]} for f in flights]


def pay(*methods_and_amounts: tuple[str, float]) -> list[dict[str, Any]]:
    """A booking's payments: (payment method id, dollars) pairs."""
    return [{"payment_method_id": method, "amount": amount} for method, amount in methods_and_amounts]


def shift(iso: str, minutes: int) -> str:
    return (datetime.fromisoformat(iso) + timedelta(minutes=minutes)).isoformat()


def depart(desk: Any, flight_id: str) -> None:
    """Make a flight have departed before the epoch."""
    desk.arrange(
        "UPDATE flights SET status = 'landed', scheduled_departure = '2026-05-14T10:00:00+00:00', "
        "scheduled_arrival = '2026-05-14T12:00:00+00:00', actual_departure = '2026-05-14T10:00:00+00:00', "
        "actual_arrival = '2026-05-14T12:00:00+00:00' WHERE id = ?",
        flight_id,
    )
