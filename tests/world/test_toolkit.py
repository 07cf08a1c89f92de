"""The world toolkit: arithmetic that is safe on an agent's input, money in cents, UTC times."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mcpsim.world import WorldError
from mcpsim.world._toolkit import dollars, evaluate_arithmetic, iso, money, to_cents


@pytest.mark.parametrize(
    ("expression", "value"),
    [("(49.99 * 2) - 10", 89.98), ("60.99*0.2", 12.2), ("-3 + 2**3", 5.0), ("7 % 4", 3.0), (" 1/3 ", 0.33)],
)
def test_arithmetic_is_evaluated_and_rounded_to_cents(expression, value):
    assert evaluate_arithmetic(expression) == value


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os').system('true')", "Only numbers"),
        ("open('/etc/passwd')", "Only numbers"),
        ("10**10**10", "Exponent too large"),
        ("1/0", "Division by zero"),
        ("2 +", "is not an arithmetic expression"),
        ("True + 1", "Only numbers"),
    ],
)
def test_anything_but_arithmetic_is_refused_with_a_reason(expression, message):
    with pytest.raises(WorldError, match=message):
        evaluate_arithmetic(expression)


def test_money_is_kept_in_cents_and_fractions_of_a_cent_are_refused():
    assert to_cents(19.99) == 1999 and dollars(1999) == 19.99 and money(-123450) == "-$1,234.50"
    with pytest.raises(WorldError, match="fractions of a cent"):
        to_cents(1.005)


def test_times_are_stored_in_utc_to_the_second():
    local = datetime(2026, 5, 15, 11, 0, 30, 999, tzinfo=timezone(timedelta(hours=2)))
    assert iso(local) == "2026-05-15T09:00:30+00:00"
