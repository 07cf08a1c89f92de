"""Whether an answer states the task's facts, and the verdict on it.

Four rules decide whether a matched fact counts:

1. Negation. A value directly qualified by a negation is not stated: `not $39.98`, `isn't
   pending`, `is no longer pending`, `won't be refunded`, `cannot be cancelled`, `never shipped`,
   `no $25 fee`, `not order W6964978`, `not $12 or $40` (both), `$39.98 instead of $40` ($40).
   From the value, the look-back passes only auxiliaries, articles, adverbs and a few prepositions
   (`is`, `be`, `been`, `the`, `any`, `yet`, `longer`, `on`, ...), the noun an id follows
   (`order`, `flight`, ...), other values and `or`, to a negation (`not`, `n't`, `no`, `never`,
   `cannot`, `without`, `neither`, `nor`, `none`, `unable`, `instead`, `rather`). Punctuation or
   any other word ends it, so negation stays in its clause ("I did not charge a fee; your refund
   is $39.98" states $39.98, as does "...because it has already shipped" after "I can't cancel"),
   and a negated verb with an object of its own leaves the object stated ("you haven't received
   the $223.98 refund yet"). A phrase fact that contains its own negation (`not eligible`) is
   looked back from its first word.
2. Hedging. Another value of the fact's type is a conflict when it is offered as an
   alternative: a hedge word (`or`, `either`, `maybe`, `perhaps`, `possibly`, `probably`) or a
   `/` among at most HEDGE_WORDS words between the two in one sentence ("$39.98 or $40",
   "$39.98/$40", "$40, or maybe $39.98"), or nothing but list punctuation between them (a bare
   list: "$39.98, $12.00, $7.50", or guesses: "$39.98? $40?"); a colon or brackets introduce an
   explanation, not alternatives ("$499: $300 from the gift card and $199 on your card",
   "$200 ($100 per passenger)"). A value that is
   itself one of the task's facts is no conflict ("$364 for a health reason, or $164 otherwise"
   when both are asked), nor is an `or` farther away ("$39.98 goes to your Visa or PayPal card,
   and the $5 fee..."), nor a comma list of names ("Sofia owns it, Dana and Ravi can view it").
   A count with a noun conflicts with any other non-negated count of that noun, in any sentence
   ("You have 3 bills. You have 4 bills."). Phrase facts are not hedged: a task whose phrase is
   one of a closed set of values lists the others as `forbidden`.
3. Stuffing. An answer that states more distinct values of one type answering none of the
   task's facts than that type's ALLOWANCE (money 4, numbers 3, dates 2, times 2, durations 2,
   percentages 2, ids 4, names 8) fails every fact of that type. A correct answer often mentions
   an order total beside the refund, or breaks an amount down ("$740: the $790 fare minus the $100
   fee, plus the $50 bag fee"), an order id and a tracking number, a name or two; every
   amount, id and name seen in the tool results is many more. Negated values are not counted.
4. Dumps. An answer with more than DUMP_ALLOWANCE such extra values overall (names aside), that
   is raw data (JSON_PAIRS or more JSON `"key": value` pairs), or that is a document (more than
   DUMP_WORDS words: a pasted policy) is not a reply to the user and fails outright.

Forbidden facts (what a misinformed answer would say) fail the answer when asserted: stated,
hedged or not, in a clause with no negation before it ("it won't leave on time" asserts no `on
time`; the clause ends at punctuation and at `and`, `but`, `because`, ...). The reason names each
fact that is missing, only negated, conflicting (and why) or forbidden. Only the text given is
graded: the harness passes the final answer.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass, field

from mcpsim.grading._answers._alternatives import Alternative, alternatives, noun_follows
from mcpsim.grading._answers._parsed import KINDS, Mention, Parsed, parse
from mcpsim.grading._answers._phrases import find_words
from mcpsim.grading._answers._text import WORD
from mcpsim.tasks import Fact, state_fact

_HEDGE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably)\b|/", re.IGNORECASE)
# A bare list of candidates: values with only list punctuation between them. A colon, brackets or
# arithmetic introduce an explanation ("$499: $300 from the gift card and $199 on the card",
# "$200 ($100 per passenger)"), not alternatives; `.` ends a statement; `$39.98? $40?` is a list.
_BARE = re.compile(r"[\s,;/|\"'?]*")


_WHOLE = re.compile(r"\b(?:out\s+of|of)(?:\s+(?:the|all|your|its|their|his|her))?\s+$", re.IGNORECASE)


ALLOWANCE = {"money": 4, "number": 3, "date": 2, "time": 2, "duration": 2, "percent": 2, "id": 4, "name": 8}
HEDGE_WORDS = 4  # `$39.98, or maybe even $40`; a longer stretch joins other things (`to your Visa or PayPal`)
DUMP_ALLOWANCE = 12  # extra typed values (all kinds but names) before an answer is a dump, not a reply
JSON_PAIRS = 3  # `"key": value` pairs before an answer is raw data
DUMP_WORDS = 400  # words before an answer is a document (a policy pasted whole), not a reply


@dataclass(frozen=True)
class Occurrence:
    """Where an alternative of a fact is stated: a mention, or a name or phrase span."""

    start: int
    end: int
    kind: str
    mention: Mention | None
    negated: bool


@dataclass
class Reading:
    """The answer read against one task's facts: which mentions answer a fact, how many extra
    values of each kind it states, and whether it is a dump."""

    parsed: Parsed
    asked: list[Alternative]
    extras: dict[str, int] = field(init=False)  # distinct values per kind that answer no fact
    dump_size: int = field(init=False)

    def __post_init__(self) -> None:
        extras: dict[str, set[Hashable]] = {kind: set() for kind in KINDS}
        for mention in self.parsed.mentions:
            if not mention.negated and not self.answers_a_fact(mention):
                extras[mention.kind].add(mention.value)
        self.extras = {kind: len(values) for kind, values in extras.items()}
        self.dump_size = sum(n for kind, n in self.extras.items() if kind != "name")

    def answers_a_fact(self, mention: Mention) -> bool:
        return any(alt.accepts(mention) for alt in self.asked)

    def dump(self) -> str | None:
        if len(self.parsed.words) > DUMP_WORDS:
            return f"the answer is {len(self.parsed.words)} words long: a document, not a reply (at most {DUMP_WORDS})"
        if self.parsed.json_pairs >= JSON_PAIRS:
            return f"the answer is raw data ({self.parsed.json_pairs} JSON key-value pairs), not a reply"
        if self.dump_size > DUMP_ALLOWANCE:
            return (
                f"the answer lists {self.dump_size} values that answer nothing asked "
                f"(at most {DUMP_ALLOWANCE} are allowed)"
            )
        return None

    def stuffed(self, kind: str) -> str | None:
        extra = self.extras.get(kind, 0)
        if extra > ALLOWANCE.get(kind, extra):
            return f"the answer states {extra} other {_KIND_NAMES[kind]} (at most {ALLOWANCE[kind]} are allowed)"
        return None

    def hedged(self, occurrence: Occurrence) -> Mention | None:
        """Another value of the same kind, in the same sentence, joined by a hedge (rule 2)."""
        if occurrence.kind == "phrase":
            return None
        sentence = self.parsed.sentence(occurrence.start)
        for other in self.parsed.of_kind(occurrence.kind):
            overlaps = other.start < occurrence.end and occurrence.start < other.end
            same = occurrence.mention is not None and other.value == occurrence.mention.value
            if other.negated or overlaps or same or self.answers_a_fact(other):
                continue
            low, high = sorted([(occurrence.start, occurrence.end), (other.start, other.end)])
            if self._joined(low[1], high[0], occurrence.kind, other.sentence == sentence):
                return other
        return None

    def rival_count(self, occurrence: Occurrence, noun: str) -> Mention | None:
        """Another count of the fact's noun anywhere in the answer, in any sentence (rule 2):
        `You have 3 bills. You have 4 bills.` and `14 visitors? 15 visitors?` are guesses. Not
        a rival: a count after the fact's that is a part of it (`3 bills: 1 bill is overdue and
        2 bills are paid`), or the one whole it is part of (`3 bills are unpaid, out of 10
        bills`). A list of guesses then passes only where its first count is the true one, as
        that count alone would."""
        mention = occurrence.mention
        if mention is None:
            return None
        wholes = 0
        for other in self.parsed.of_kind("number"):
            if other.negated or other.value == mention.value or self.answers_a_fact(other):
                continue
            if not noun_follows(self.parsed, other, noun):
                continue
            later = other.start > occurrence.end
            if later and isinstance(other.value, int | float) and isinstance(mention.value, int | float):
                if other.value < mention.value:
                    continue  # a part of the count
                before = self.parsed.text[max(0, other.start - 16) : other.start]
                if wholes == 0 and _WHOLE.search(before):
                    wholes += 1
                    continue  # the whole it is part of
            return other
        return None

    def _joined(self, start: int, end: int, kind: str, one_sentence: bool) -> bool:
        """Whether the text between two values offers them as alternatives: a hedge word (or a
        `/`) among at most HEDGE_WORDS words of one sentence, or nothing but punctuation and
        other values (a bare list of candidates: `$39.98, $40`, or guesses `$39.98? $40?`)."""
        between = list(self.parsed.text[start:end])
        for mention in self.parsed.mentions:
            for i in range(max(mention.start, start), min(mention.end, end)):
                between[i - start] = " "
        rest = "".join(between)
        if kind != "name" and _BARE.fullmatch(rest) and (one_sentence or "?" in rest):  # names: prose lists
            return True
        return one_sentence and _HEDGE.search(rest) is not None and len(WORD.findall(rest)) <= HEDGE_WORDS

    def occurrences(self, alt: Alternative) -> list[Occurrence]:
        parsed = self.parsed
        if alt.kind == "phrase":
            return [
                Occurrence(s, e, "phrase", None, parsed.negated(s))
                for s, e in find_words(parsed, alt.value, inflected=True)  # type: ignore[arg-type]
            ]
        found = [
            Occurrence(m.start, m.end, m.kind, m, m.negated) for m in parsed.of_kind(alt.kind) if alt.accepts(m, parsed)
        ]
        if alt.kind == "name":  # a name inside a longer run, or in lower case
            spans = {(o.start, o.end) for o in found}
            found += [
                Occurrence(s, e, "name", None, parsed.negated(s))
                for s, e in find_words(parsed, tuple(str(alt.value).split()), inflected=False)
                if (s, e) not in spans
            ]
        if alt.kind == "id":  # an id too short to be read as one (`4186`) is still that token
            found += [
                Occurrence(m.start(), m.end(), "id", None, parsed.negated(m.start()))
                for m in re.finditer(
                    rf"(?<![\w@.-])#?{re.escape(str(alt.value))}(?![\w@-]|\.\w)", parsed.text, re.IGNORECASE
                )
                if not any(o.start <= m.start() < o.end for o in found)
            ]
        return found


_KIND_NAMES = {
    "money": "amounts of money",
    "number": "numbers",
    "date": "dates",
    "time": "times of day",
    "duration": "durations",
    "percent": "percentages",
    "id": "ids",
    "name": "names",
}


@dataclass(frozen=True)
class FactResult:
    fact: Fact
    status: str  # stated, missing, negated, conflicting
    detail: str = ""

    @property
    def label(self) -> str:
        return state_fact(self.fact) + (f" ({self.detail})" if self.detail else "")


def judge(fact: Fact, reading: Reading) -> FactResult:
    """Whether the answer states `fact`: found, not negated, not hedged, not stuffed."""
    conflicts: list[str] = []
    negated = False
    for alt in alternatives(fact):
        for occurrence in reading.occurrences(alt):
            if occurrence.negated:
                negated = True
                continue
            problem = None
            if alt.kind != "phrase":
                other = reading.hedged(occurrence) or (alt.noun and reading.rival_count(occurrence, alt.noun))
                problem = reading.stuffed(alt.kind) or (
                    other and f"hedged with {reading.parsed.text[other.start : other.end]!r}"
                )
            if not problem:
                return FactResult(fact, "stated")
            conflicts.append(problem)
    if conflicts:
        return FactResult(fact, "conflicting", conflicts[0])
    return FactResult(fact, "negated" if negated else "missing")


def forbidden_stated(fact: Fact, parsed: Parsed) -> bool:
    """Whether the answer asserts a forbidden fact: stated in a clause with no negation at all
    (`it won't leave on time` does not assert `on time`; rule 1 alone would say it does)."""
    reading = Reading(parsed, [])
    return any(
        not o.negated and not parsed.in_negated_clause(o.start)
        for alt in alternatives(fact)
        for o in reading.occurrences(alt)
    )


def fact_stated(fact: Fact, answer: str) -> bool:
    """Whether `answer` states `fact` (as graded when it is the task's only fact)."""
    reading = Reading(parse(answer), list(alternatives(fact)))
    return reading.dump() is None and judge(fact, reading).status == "stated"


def grade_answer(facts: list[Fact], forbidden: list[Fact], answer: str | None) -> tuple[bool, str]:
    if not answer or not answer.strip():
        return False, "no final answer was given"
    parsed = parse(answer)
    reading = Reading(parsed, [alt for fact in facts for alt in alternatives(fact)])
    results = [judge(fact, reading) for fact in facts]
    dump = reading.dump()
    problems = [dump] if dump else []
    for status, title in (
        ("missing", "missing"),
        ("negated", "stated only under negation"),
        ("conflicting", "conflicting"),
    ):
        listed = [r.label for r in results if r.status == status]
        if listed:
            problems.append(f"{title}: " + ", ".join(listed))
    wrong = [state_fact(f) for f in forbidden if forbidden_stated(f, parsed)]
    if wrong:
        problems.append("states what is not so: " + ", ".join(wrong))
    return not problems, "; ".join(problems) or f"all {len(facts)} facts stated"
