"""Each check's stable name in a verdict: the id the task file gives it, else its type and target
(`field_equals:orders`, `tool_called:cancel_order`, `confirmed:writes`, `answer_facts`), with
`#2`, `#3`... for a second and third check of one name. Dashboards and per-check rewards key on
it, not on a check's position, so adding a check of another kind moves no other check's id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpsim.grading._verdict import CheckResult

_TARGETS = ("table", "tool", "name")  # the one field that says what a check is about
_LISTS = ("tools", "first")  # or the first pattern of a list of them


def derived_id(check_type: str, check: Any = None) -> str:
    """`type:target` from a rubric check's fields (`type` alone when it has no target)."""
    for field in _TARGETS:
        value = getattr(check, field, None)
        if isinstance(value, str) and value:
            return f"{check_type}:{value}"
    for field in _LISTS:
        value = getattr(check, field, None)
        if isinstance(value, str) and value:  # `confirmed`'s "writes"
            return f"{check_type}:{value}"
        if isinstance(value, list) and value:
            return f"{check_type}:{value[0]}"
    return check_type


def with_ids(results: Sequence[CheckResult], rubric: Sequence[Any]) -> list[CheckResult]:
    """`results` (the rubric's checks first, in order, then the derived ones) each with its id:
    the rubric check's own, else derived; a repeated id gets `#n` (n counting from 2)."""
    given = {getattr(check, "id", None) for check in rubric} - {None}
    seen: dict[str, int] = {}
    named = []
    for i, result in enumerate(results):
        check = rubric[i] if i < len(rubric) else None
        own = getattr(check, "id", None)
        if own is None:
            base = derived_id(result.type, check)
            seen[base] = seen.get(base, 0) + 1
            own = base if seen[base] == 1 else f"{base}#{seen[base]}"
            while own in given:  # a given id wins; the derived one moves on
                seen[base] += 1
                own = f"{base}#{seen[base]}"
        named.append(result.model_copy(update={"id": own}))
    return named
