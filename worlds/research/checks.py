"""Custom rubric checks for research tasks: the notebook's final state, graded as typed facts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from mcpsim.grading import GradingContext, grade_answer
from mcpsim.tasks import Fact

from . import world

_FACTS = TypeAdapter(list[Fact])


@world.check("notebook")
def notebook(
    ctx: GradingContext, facts: list[dict[str, Any]], cite: list[str], notes: int = 1, forbidden: Sequence[Any] = ()
) -> tuple[bool, str]:
    """The episode left exactly `notes` new notes in the notebook; together they state every fact
    of `facts` (none of `forbidden`), and they cite at least one of the documents in `cite` (the
    world only lets a note cite documents the agent opened)."""
    written = [c.after for (table, _), c in ctx.changes.items() if table == "notes" and c.before is None and c.after]
    if len(written) != notes:
        return False, f"{len(written)} note(s) were written, expected {notes}"
    text = "\n".join(f"{n['title']}. {n['text']}" for n in written)
    passed, reason = grade_answer(_FACTS.validate_python(facts), _FACTS.validate_python(list(forbidden)), text)
    if not passed:
        return False, f"the notebook does not hold the finding: {reason}"
    cited = {s for n in written for s in _sources(n["sources"])}
    if not cited & set(cite):
        return False, f"the notes cite {sorted(cited)}, none of the documents the finding rests on ({', '.join(cite)})"
    return True, f"the notebook holds the finding, citing {', '.join(sorted(cited & set(cite)))}"


def _sources(value: Any) -> list[str]:
    """A note's sources as the change log holds them (JSON text) or as a list."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [str(s) for s in value] if isinstance(value, list) else []


@world.check("opened")
def opened(ctx: GradingContext, groups: list[list[str]]) -> tuple[bool, str]:
    """Citations: for every group of documents (one fact's sources, any of which will do), the
    agent opened at least one of them (a search snippet is not a source)."""
    read = {
        str(c.arguments.get("doc_id", "")).strip()
        for c in ctx.transcript
        if c.tool == "open" and c.call_seq is not None and c.ok and isinstance(c.arguments, dict)
    }
    missing = [group for group in groups if not read & set(group)]
    if missing:
        shown = "; ".join(" or ".join(group) for group in missing)
        return False, f"the answer rests on documents the agent never opened: {shown}"
    return True, f"the agent opened a source of each fact ({_plural(len(groups))})"


def _plural(n: int) -> str:
    return f"{n} fact{'' if n == 1 else 's'}"
