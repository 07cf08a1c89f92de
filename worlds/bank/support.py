"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

import ast
import math
import operator
from typing import Annotated, Any

from pydantic import Field

from mcpsim.world import ToolContext, WorldError

from . import world
from .common import TicketTopic, iso, new_id
from .inputs import CustomerId
from .lookups import get_customer
from .tables import Ticket
from .views import CalculationResult, TicketView

_BINARY: dict[type, Any] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Any] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > 1e6):
            raise WorldError("Exponent too large")
        return _BINARY[type(node.op)](left, right)
    raise WorldError("Only numbers, parentheses and + - * / % ** are allowed")


@world.tool(read_only=True, idempotent=True)
def calculate(
    ctx: ToolContext,
    expression: Annotated[
        str, Field(description="An arithmetic expression, such as '2500 - 1875.40'.", min_length=1, max_length=200)
    ],
) -> CalculationResult:
    """Evaluate an arithmetic expression (numbers, parentheses, + - * / % **); the result is
    rounded to two decimals. Use it for balances, remaining limits and totals."""
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
    return CalculationResult(expression=expression, result=round(result, 2))


@world.tool()
def transfer_to_human_agent(
    ctx: ToolContext,
    topic: Annotated[TicketTopic, Field(description="What the human agent is needed for.")],
    summary: Annotated[
        str, Field(description="What the customer wants, what was done and why a human is needed.",
                   min_length=10, max_length=2000),
    ],
    customer_id: Annotated[CustomerId | None, Field(description="The customer, once found (verified or not).")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket. Only for what this policy and
    these tools cannot do (a locked verification, a restricted profile, releasing a fraud hold,
    raising a transfer limit, older statements...), or when the customer insists on a human after
    you have tried to help. Then tell the customer they are being transferred and stop."""
    customer = get_customer(ctx.session, customer_id) if customer_id else None
    ticket = Ticket(
        id=new_id(ctx.ids, "ticket"), customer_id=customer.id if customer else None, topic=topic,
        summary=summary.strip(), status="open", created_at=iso(ctx.now),
    )
    ctx.session.add(ticket)
    return TicketView(ticket_id=ticket.id, customer_id=ticket.customer_id, topic=ticket.topic,
                      summary=ticket.summary, status=ticket.status, created_at=ticket.created_at)
