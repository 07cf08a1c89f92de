"""Grading the agent's final answer against the task's typed facts.

(Interim: the old substring matching, moved here unchanged; being replaced by typed parsing.)
"""

from __future__ import annotations

import re
import unicodedata

from mcpsim.tasks import AnyFact, Fact, NumberFact, state_fact

_NUMBER = re.compile(r"(?<![\w.])-?\$?\d[\d,]*(?:\.\d+)?")


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[\u2018\u2019\u201c\u201d`]", "'", text)
    return " ".join(re.sub(r"[^\w$%.'#-]+", " ", text).split())


def numbers_in(text: str) -> list[float]:
    return [float(m.replace("$", "").replace(",", "")) for m in _NUMBER.findall(text)]


def fact_stated(fact: Fact, answer: str) -> bool:
    normal = normalize(answer)

    def phrase(p: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(normalize(p))}(?!\w)", normal) is not None

    match fact:
        case NumberFact(number=number, tolerance=tolerance):
            return any(abs(n - number) <= tolerance + 1e-9 for n in numbers_in(answer))
        case AnyFact(any=phrases):
            return any(phrase(p) for p in phrases)
        case str():
            return phrase(fact)
    return phrase(state_fact(fact))


def grade_answer(facts: list[Fact], forbidden: list[Fact], answer: str | None) -> tuple[bool, str]:
    if not answer:
        return False, "no final answer was given"
    missing = [state_fact(f) for f in facts if not fact_stated(f, answer)]
    stated = [state_fact(f) for f in forbidden if fact_stated(f, answer)]
    problems = (["missing: " + ", ".join(missing)] if missing else []) + (
        ["states what is not so: " + ", ".join(stated)] if stated else [])
    return not problems, "; ".join(problems) or f"all {len(facts)} facts stated"
