"""Free-text rules: how a column the agent fills in its own words (a memo, a message body, an
event title) is graded, instead of by equality with the gold solution's value."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mcpsim.tasks._facts import Fact
from mcpsim.tasks._strict import Strict

__all__ = ["FreeTextRule", "free_text_rules"]


class FreeTextRule(Strict):
    """How a column the agent fills in its own words (a memo, a message body, an event title) is
    graded, instead of by equality with the gold solution's value. A value equal to one of the
    gold solution's values in that column (after normalising case, spacing and punctuation)
    always passes; any other value must satisfy every part of the rule (`mcpsim.grading._written`)."""

    grounded: bool = Field(
        True,
        description=(
            "Every number in the text, and all its words but one (or a quarter of them, if more), appear in what the "
            "agent was told (the instruction, the user's messages) or read (its tool results), or in the gold "
            "solution's text there, and never three words from nowhere in a row; common words are free."
        ),
    )
    states: list[Fact] = Field([], description="Facts the text must state (parsed as in answers).")
    equals_gold: bool = Field(False, description="The text must equal one of the gold solution's values there.")
    checked_by: str | None = Field(
        None,
        description=(
            "The name of a custom check of the rubric that grades this column (a recurrence given as a count or "
            "as an end date, say); the value is then left to that check."
        ),
    )


def free_text_rules(value: Any) -> Any:
    """`free_text:` maps column patterns to a rule, or to a shorthand: `grounded` (the default
    rule) or `gold` (equal to the gold solution's text after normalisation)."""
    if not isinstance(value, dict):
        return value
    shorthands = {"grounded": {}, "gold": {"grounded": False, "equals_gold": True}}
    rules = {}
    for pattern, rule in value.items():
        if isinstance(rule, str):
            if rule not in shorthands:
                raise ValueError(f"free_text {pattern}: unknown rule {rule!r} (use grounded, gold or a mapping)")
            rule = shorthands[rule]
        rules[pattern] = {} if rule is None else rule
    return rules
