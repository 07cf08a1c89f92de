"""The scripted user's dialogue beyond yes and no: details it gives only when asked, and the
requests for the go-ahead it turns down (a change of mind, a declined write).

A task opts in with one entry of `user.knows`, under the key `DIALOGUE`:

    knows:
      name: Ann Lee
      dialogue:
        reveal: {order: "The one with the highest total."}   # topic -> what the user says when asked
        propose: [{tool: cancel_order, args: {order_id: OR1001}}]  # the gold asks for these, the user says no

`reveal`: a question of the agent's that asks for a detail (a sentence that asks, with which,
what, when, ... or "tell me") and names a topic's words (or asks "which one") gets the topic's
answer, the same answer every time; any other such question gets `UNKNOWN_REPLY`. `propose`: the
writes the gold solution asks the go-ahead for and the user turns down (its answer is scripted
in `user.confirmations`): the first detail of a change of mind, or a declined write. A task
without the entry (every hand-built one) is untouched: the scripted user answers it as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpsim.tasks._task import Action, Task

__all__ = ["DIALOGUE", "UNKNOWN_REPLY", "detail_question", "detail_reply", "proposals", "reveals"]

DIALOGUE = "dialogue"
UNKNOWN_REPLY = "Sorry, I don't know that; I've told you what I know."

# A sentence asks for a detail when it opens with a question word, says "which" anywhere, or asks to
# be told; "Here is what I will do: ... shall I go ahead?" does not.
_ASKS = re.compile(
    r"^\W*(?:(?:and|so|ok(?:ay)?|great|sure|thanks)\W+)?(?:what|whose|when|where|who|how)\b|\bwhich\b"
    r"|\b(?:tell me|let me know|specify|remind me)\b",
    re.IGNORECASE,
)
_OFFER = re.compile(r"\banything else\b|\bsomething else\b|\bhelp you with\b|\bany other\b", re.IGNORECASE)
_WHICH_ONE = re.compile(r"\bwhich (?:one|of them)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?:[^.!?\n]|(?<=\d)\.(?=\d))+[.!?]*")
_WORD = re.compile(r"[a-z0-9]+")


def _entry(task: Task) -> Mapping[str, Any]:
    entry = task.user.knows.get(DIALOGUE)
    return entry if isinstance(entry, Mapping) else {}


def reveals(task: Task) -> dict[str, str]:
    """The details the user gives only when asked: topic -> answer."""
    found = _entry(task).get("reveal")
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, Mapping) else {}


def proposals(task: Task) -> list[Action]:
    """The writes the gold solution asks the go-ahead for and the user turns down."""
    found = _entry(task).get("propose")
    return [Action.model_validate(a) for a in found] if isinstance(found, list) else []


def detail_question(topic: str) -> str:
    """The gold solution's question for a detail (the scripted user answers it)."""
    return f"Which {topic} do you mean?"


def _words(text: str) -> set[str]:
    found = set(_WORD.findall(text.lower()))
    return found | {w[:-1] for w in found if len(w) > 3 and w.endswith("s") and not w.endswith("ss")}


def detail_reply(question: str | None, task: Task) -> str | None:
    """The user's answer to a question asking for a detail, or None when the task reveals
    nothing or `question` asks for no detail: the first topic a sentence asking for a detail
    names (all its words, singular or plural), else `UNKNOWN_REPLY`."""
    topics = reveals(task)
    if not topics or not question:
        return None
    asked = False
    for sentence in (s.strip() for s in _SENTENCE.findall(question)):
        if not sentence.endswith("?") and not re.search(r"\b(?:tell me|let me know|specify)\b", sentence, re.I):
            continue
        if not _ASKS.search(sentence) or _OFFER.search(sentence):
            continue
        asked = True
        said = _words(sentence)
        for topic, answer in topics.items():
            if _WHICH_ONE.search(sentence) or _words(topic) <= said:
                return answer
    return UNKNOWN_REPLY if asked else None
