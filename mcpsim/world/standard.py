"""Standard tools a world opts into, so every world does not write its own copy.

from mcpsim.world.standard import add_calculator
add_calculator(world, example="(49.99 * 2) - 10", purpose="totals, price differences and refunds")
"""

# No `from __future__ import annotations`: the argument's annotation names `example`, a local
# that typing.get_type_hints could not resolve from a string.
from typing import Annotated

from pydantic import BaseModel, Field

from mcpsim.world.core import ToolContext, World
from mcpsim.world.toolkit import evaluate_arithmetic


class CalculationResult(BaseModel):
    expression: str
    result: float


def add_calculator(world: World, *, example: str, purpose: str, name: str = "calculate") -> None:
    """Register a read-only arithmetic tool (numbers, parentheses, + - * / % **; no names, no
    calls, bounded exponents: see `toolkit.evaluate_arithmetic`). `example` goes into the argument's
    description, `purpose` into the tool's."""

    def calculate(
        ctx: ToolContext,
        expression: Annotated[
            str, Field(description=f"An arithmetic expression, such as '{example}'.", min_length=1, max_length=200)
        ],
    ) -> CalculationResult:
        return CalculationResult(expression=expression, result=evaluate_arithmetic(expression))

    calculate.__doc__ = (
        "Evaluate an arithmetic expression (numbers, parentheses, + - * / % **); the result is\n"
        f"rounded to two decimals. Use it for {purpose}."
    )
    world.tool(read_only=True, idempotent=True, name=name)(calculate)
