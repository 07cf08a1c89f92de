"""What most worlds need and should not each write again: safe arithmetic for a `calculate`
tool, money kept in integer cents (and netted per payment method), and UTC timestamps as ISO strings."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

from mcpsim.world._core import WorldError

_BINARY: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Any] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return float(_UNARY[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > 1e6):
            raise WorldError("Exponent too large")  # 10**10**10 would never finish
        return float(_BINARY[type(node.op)](left, right))
    raise WorldError("Only numbers, parentheses and + - * / % ** are allowed")


def evaluate_arithmetic(expression: str) -> float:
    """The value of an arithmetic expression, rounded to two decimals; anything else (names,
    calls, attributes) is refused with a WorldError, so it is safe on an agent's input."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise WorldError(f"'{expression}' is not an arithmetic expression") from None
    try:
        result = _evaluate(tree)
    except ZeroDivisionError:
        raise WorldError("Division by zero") from None
    except OverflowError:
        raise WorldError("The result is too large") from None
    if isinstance(result, complex) or not math.isfinite(result):
        raise WorldError("The result is not a finite real number")
    return round(result, 2)


def to_cents(dollars: float) -> int:
    """Dollars from a tool argument to integer cents; refuses fractions of a cent."""
    cents = round(dollars * 100)
    if abs(dollars * 100 - cents) > 1e-6:
        raise WorldError(f"Amount {dollars} has fractions of a cent; give at most two decimals")
    return cents


def dollars(cents: int) -> float:
    return round(cents / 100, 2)


class LedgerEntry(Protocol):
    """A payment row as `net_by_method` reads it: a charge or a refund of a payment method."""

    kind: str  # "charge" takes money from the method; any other kind gives it back
    payment_method_id: str
    amount_cents: int


def net_by_method(payments: Iterable[LedgerEntry]) -> dict[str, int]:
    """What each payment method has paid and not yet had back, keyed in the order of its first
    payment (so that refunds can go back to methods in the order they paid)."""
    net: dict[str, int] = {}
    for payment in payments:
        sign = 1 if payment.kind == "charge" else -1
        net[payment.payment_method_id] = net.get(payment.payment_method_id, 0) + sign * payment.amount_cents
    return net


def money(cents: int) -> str:
    """For messages: `$1,234.50`."""
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) / 100:,.2f}"


def iso(moment: datetime) -> str:
    """A UTC timestamp as stored in world tables: `2026-05-15T09:00:30+00:00`."""
    return moment.astimezone(UTC).isoformat(timespec="seconds")
