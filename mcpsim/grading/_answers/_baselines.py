"""The cheating baselines' answers: a fact under negation, and every value found in some texts."""

from __future__ import annotations

from typing import cast

from mcpsim.grading._answers._parsed import DateValue, parse
from mcpsim.tasks import Fact, state_fact


def negate(fact: Fact) -> str:
    """A sentence that mentions the fact's value under negation (the negating baseline's answer)."""
    return f"It is not {state_fact(fact)}."


def stuffed_answer(texts: list[str]) -> str:
    """Every amount, number, date, time, duration, id and capitalised name found in `texts`, in one
    answer (the stuffing baseline's): numbers are given both bare and as money."""
    items: dict[str, None] = {}
    for text in texts:
        parsed = parse(text)
        for mention in parsed.mentions:
            shown = parsed.text[mention.start : mention.end].strip()
            items[shown] = None
            if mention.kind in ("number", "money"):
                items[f"${float(mention.value):,.2f}"] = None  # type: ignore[arg-type]
                items[f"{float(mention.value):g}"] = None  # type: ignore[arg-type]
            elif mention.kind == "date":
                year, month, day = cast(DateValue, mention.value)
                items[f"{year:04d}-{month:02d}-{day:02d}" if year else f"{month}/{day}"] = None
    return "I found: " + ", ".join(items) + "." if items else "I found nothing."
