"""The one-step greedy agent of the `one_step_greedy` baseline: one call to the tool that best
matches the instruction, its arguments copied from the instruction (`_transcriber`'s matching
and filling), then a final answer that echoes the result as sentences. A task it passes needs
one call and no reasoning; `mcpsim check` and the factory's acceptance hold its pass rate per
world under `TRIVIAL_LIMIT`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mcpsim.audit._transcriber import Played, best_calls, play, words
from mcpsim.engine import CallResult, TemplateCache
from mcpsim.tasks import Task
from mcpsim.world import World

__all__ = ["ECHOED_FIELDS", "echoed", "greedy_step"]

_ITEMS_ECHOED = 3
ECHOED_FIELDS = 10


def greedy_step(world: World, task: Task, templates: TemplateCache) -> Played:
    """The greedy agent on `task`: the best matching tool it can fill, called once (after the
    go-ahead where the rubric wants one), and the call's result, echoed, as its answer."""
    reads, write = best_calls(world, task.instruction)
    call = write or next(iter(reads), None)
    played = play(world, task, templates, [call] if call else [])
    if call is not None and played.last is not None:
        played.answer = echoed(played.last, task.instruction, call.tool.rsplit("_", 1)[-1].replace("-", " "))
    return played


def echoed(result: CallResult, instruction: str, noun: str = "items") -> str:
    """A result as a reply that repeats it: "The status is shipped. The total is 12." (an error
    as "I could not do it: ..."), a list as its count of `noun` and its items; only the fields
    the instruction names if it names any, else the first ECHOED_FIELDS."""
    if result.is_error:
        return f"I could not do it: {result.error}"
    said = _sentences(result.value, noun=noun)
    asked = words(instruction)
    named = [s for key, s in said if not key or words(key) & asked]
    return " ".join(named if len(named) > sum(not key for key, _ in said) else [s for _, s in said][:ECHOED_FIELDS])


def _sentences(value: Any, subject: str = "", *, noun: str) -> list[tuple[str, str]]:
    """(field, sentence) for every value inside `value`; a list's count has no field."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        said = []
        for key, item in value.items():
            said += _sentences(item, key.replace("_", " "), noun=noun)
        return said
    if isinstance(value, list):
        said = [("", f"There are {len(value)} {noun if subject in ('', 'items') else subject}.")]
        for item in value[:_ITEMS_ECHOED]:
            said += _sentences(item, noun=noun)
        return said
    if value is None or value == "":
        return []
    return [(subject, f"The {subject} is {value}." if subject else f"{value}.")]
