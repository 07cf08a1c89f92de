"""The facts an answer states and the ones it must not: a typed fact for a stored value
(`fact`), the rival values of an enum field (`rivals`), a fact as the rubric states it
(`stated`), and the clauses of a world's refusal message that restate a blocking value
(`relayed`)."""

from __future__ import annotations

import re
from typing import Any

from mcpsim.grading import word_forms
from mcpsim.specs import ActionSpec, WorldSpec
from mcpsim.taskgen._wording import plural, singular
from mcpsim.tasks import CountFact, DateFact, Fact, MoneyFact, NameFact, PhraseFact, state_fact


def fact(spec: WorldSpec, entity: str, name: str, value: Any) -> Fact | None:
    """A typed fact for a stored value, or None where no answer could state it unambiguously."""
    if value is None or name == "id":
        return None
    f = spec.entities[entity].fields[name]
    if f.type == "money":
        return MoneyFact(money=value / 100)
    if f.type == "date":
        return DateFact(date=str(value)[:10])
    if f.type == "int" and value > 0:
        return CountFact(count=int(value), noun=singular(name))
    if f.type == "enum":
        return PhraseFact(phrase=str(value).replace("_", " "))
    if f.type == "str" and name == "name":
        return NameFact(name=str(value))
    return None


def rivals(spec: WorldSpec, entity: str, name: str, value: Any, action: ActionSpec | None = None) -> list[Fact]:
    """The other values of an enum field, as forbidden facts: an answer that lists every value
    the schemas offer ("basic or standard or premium") states a rival. A rival sharing a word
    with the answer's phrase is left out ("in transit" holds "transit"); one that the action's
    own name inflects ("cancel" and "cancelled") is forbidden only as a claim that the record
    reached it ("is now cancelled", "has been cancelled"), since a refusal names the action."""
    f = spec.entities[entity].fields.get(name)
    if f is None or f.type != "enum":
        return []
    own = set(str(value).split("_"))
    verbs = {w for w in action.name.split("_")} if action is not None else set()
    goal = target(action) if action is not None else None
    found: list[Fact] = []
    for other in f.values or []:
        words = other.split("_")
        if other == value or own & set(words):
            continue
        phrase = " ".join(words)
        if phrase == goal or any(same_word(w, v) for w in words for v in verbs):
            found.append(
                PhraseFact(phrase=f"been {phrase}", synonyms=[f"is {phrase}", f"now {phrase}", f"was {phrase}"])
            )
        else:
            found.append(PhraseFact(phrase=phrase))
    return found


def stated(fact: Fact) -> Any:
    """A fact as the rubric states it (a count's noun in its plural: `4 capacities`)."""
    if isinstance(fact, CountFact) and fact.noun and fact.count != 1:
        words = fact.noun.split()
        return " ".join([str(fact.count), *words[:-1], plural(words[-1])])
    return state_fact(fact)


def target(action: ActionSpec | None) -> str | None:
    """The state a transition moves its row to, as an answer words it."""
    return action.to.replace("_", " ") if action is not None and action.to else None


_LEADING_VERBS = frozenset({"is", "are", "was", "were", "has", "have", "had"})


def relayed(message: str, values: list[str], phrase: str) -> list[str]:
    """Clauses of a refusal message (placeholders and punctuation cut them) that restate the
    blocking value: `Doctor {doctor.name} is not accepting new appointments` gives `not accepting
    new appointments` for `full list`. A clause of fewer than two words, or one naming another
    value of the field other than under a negation, is left out."""
    others = [w for v in values if v.replace("_", " ") != phrase for w in v.split("_")]
    found: list[str] = []
    for chunk in re.split(r"\{[^}]*\}|[;,.:()!?]", message):
        words = chunk.split()
        if words and words[0].casefold() in _LEADING_VERBS:
            words = words[1:]
        text = " ".join(words)
        negated = [i for i, w in enumerate(words) if w.casefold() in ("not", "no", "never") or w.endswith("n't")]
        named = [i for i, w in enumerate(words) if any(same_word(w, r) for r in others)]
        if len(words) < 2 or text.casefold() == phrase or (named and not (negated and negated[0] < named[0])):
            continue
        if text not in found:
            found.append(text)
    return found


def same_word(a: str, b: str) -> bool:
    return not word_forms(a.casefold()).isdisjoint(word_forms(b.casefold()))
