"""What an answer states about the task's facts, read as claims (`_claims`): each fact stated,
missing, denied, asked, hedged, swapped or conflicting, and the answer's verdict.

A fact is stated when a claim of its value (any way of writing it: `_alternatives`) is
**asserted**, **about its own subject**, and has **no rival**. The rules:

1. Polarity (`_polarity`). A denied value is not stated: under a negation before it (`not
   $39.98`, `isn't pending`, `is no longer pending`, `won't be refunded`, `no $25 fee`, `not order
   W6964978`, `$39.98 instead of $40`, `rather than $40`), taken back after it (`$40 is
   incorrect`, `$40 was wrong`, `$40 - that's not right`, `..., but that figure is wrong`,
   `Scratch that.`), replaced (`$40, sorry, I mean $45`; `Actually, it's $45.`) or said again and
   denied there (`Your refund is $40. That $40 is wrong.`; not a denial of the same value of another
   subject: `There is no $40 fee.`). Negation stays
   in its clause ("I did not charge a fee; your refund is $39.98" states $39.98; "you haven't
   received the $223.98 refund yet" states $223.98). A value only asked ("Is it $40?", "..., right?")
   or only hedged ("maybe", "might be", "I think it could be", "either ... or") is not stated.
   Phrase facts take the same polarity, a phrase that holds its own negation (`not eligible`)
   looked back from its first word.
2. Rivals (`_rivals`). Another value of the fact's kind, offered with it (`or`, a bare list),
   hedged or asked and not told apart from it, or asserted of the same subject (or of the fact's
   subject from the task's reference text), fails the fact however the guesses are spread over
   sentences and questions. Values of other subjects are no rivals (another order's total, the
   parts of a sum, the time in the other zone), nor are the task's other facts, unless said of
   this fact's subject. A value said of another fact's subject and not its own is swapped (two
   times, two amounts with their subjects exchanged).
3. Stuffing. An answer that states more distinct values of one type answering none of the task's
   facts than that type's ALLOWANCE (money 4, numbers 3, dates 2, times 2, durations 2,
   percentages 2, ids 4, phone numbers 2, names 8) fails every fact of that type. Denied values are not counted.
4. Dumps. An answer with more than DUMP_ALLOWANCE such extra values overall (names aside), that
   is raw data (JSON_PAIRS or more JSON `"key": value` pairs), or that is a document (more than
   DUMP_WORDS words: a pasted policy) is not a reply to the user and fails outright; the last two
   are seen before any claim is read, so a long text costs no more than its parse.

Forbidden facts (what a misinformed answer would say) fail the answer when said at all: asserted,
hedged or asked, in a clause with no negation before it and not taken back ("it won't leave on
time" does not say `on time`). The reason names each fact that is missing, denied, asked, hedged,
swapped, conflicting (and with what) or forbidden. Only the text given is graded.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from mcpsim.grading._answers._alternatives import Alternative, alternatives
from mcpsim.grading._answers._claims import Claim, Claims, claims_of
from mcpsim.grading._answers._parsed import KINDS, Parsed, parse
from mcpsim.grading._answers._phrases import find_words
from mcpsim.grading._answers._polarity import ASKED, ASSERTED, DENIED, HEDGED
from mcpsim.grading._answers._reference import FactSubject, fact_subjects
from mcpsim.grading._answers._rivals import RivalFinder
from mcpsim.grading._answers._subjects import same_subject
from mcpsim.tasks import Fact, state_fact

ALLOWANCE = {"money": 4, "number": 3, "date": 2, "time": 2, "duration": 2, "percent": 2, "id": 4, "phone": 2, "name": 8}
DUMP_ALLOWANCE = 12  # extra typed values (all kinds but names) before an answer is a dump, not a reply
JSON_PAIRS = 3  # `"key": value` pairs before an answer is raw data
DUMP_WORDS = 400  # words before an answer is a document (a policy pasted whole), not a reply


@dataclass(frozen=True)
class Occurrence:
    """Where an alternative of a fact is said: a claim, or a name or phrase span, and how."""

    start: int
    end: int
    kind: str
    claim: Claim | None
    polarity: str


@dataclass
class Reading:
    """The answer read against one task's facts: its claims, how many extra values of each kind
    it states, whether it is a dump, and the rivals of its values."""

    claims: Claims
    facts: Sequence[Sequence[Alternative]]
    subjects: Sequence[FactSubject] = ()
    extras: dict[str, int] = field(init=False)  # distinct values per kind that answer no fact
    dump_size: int = field(init=False)
    rivals: RivalFinder = field(init=False)

    def __post_init__(self) -> None:
        self.rivals = RivalFinder(self.claims, self.facts, self.subjects)
        extras: dict[str, set[Hashable]] = {kind: set() for kind in KINDS}
        for claim in self.claims.claims:
            if claim.polarity != DENIED and not self.rivals.answers_a_fact(claim.mention):
                extras[claim.kind].add(claim.mention.value)
        self.extras = {kind: len(values) for kind, values in extras.items()}
        self.dump_size = sum(n for kind, n in self.extras.items() if kind != "name")

    @property
    def parsed(self) -> Parsed:
        return self.claims.parsed

    def dump(self) -> str | None:
        document = not_a_reply(self.parsed)
        if document:
            return document
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

    def occurrences(self, alt: Alternative) -> list[Occurrence]:
        parsed, claims = self.parsed, self.claims
        if alt.kind == "phrase":
            return [
                Occurrence(s, e, "phrase", None, claims.polarity_at(s, e))
                for s, e in find_words(parsed, alt.value, inflected=True)  # type: ignore[arg-type]
            ]
        found = [
            Occurrence(c.start, c.end, c.kind, c, c.polarity)
            for c in claims.of_kind(alt.kind)
            if alt.accepts(c.mention, parsed)
        ]
        if alt.kind == "name":  # a name inside a longer run, or in lower case
            spans = {(o.start, o.end) for o in found}
            found += [
                Occurrence(s, e, "name", None, claims.polarity_at(s, e))
                for s, e in find_words(parsed, tuple(str(alt.value).split()), inflected=False)
                if (s, e) not in spans
            ]
        if alt.kind == "id":  # an id too short to be read as one (`4186`) is still that token
            for m in re.finditer(
                rf"(?<![\w@.-])#?{re.escape(str(alt.value))}(?![\w@-]|\.\w)", parsed.text, re.IGNORECASE
            ):
                if any(o.start <= m.start() < o.end for o in found):
                    continue
                number = next((c for c in claims.of_kind("number") if c.start <= m.start() < c.end), None)
                polarity = number.polarity if number else claims.polarity_at(m.start(), m.end(), typed=True)
                found.append(Occurrence(m.start(), m.end(), "id", number, polarity))
        return found


def not_a_reply(parsed: Parsed) -> str | None:
    """Whether the text is a document (more than DUMP_WORDS words) or raw data (JSON_PAIRS or more
    `"key": value` pairs): seen from its words alone, before any claim is read."""
    if len(parsed.words) > DUMP_WORDS:
        return f"the answer is {len(parsed.words)} words long: a document, not a reply (at most {DUMP_WORDS})"
    if parsed.json_pairs >= JSON_PAIRS:
        return f"the answer is raw data ({parsed.json_pairs} JSON key-value pairs), not a reply"
    return None


_KIND_NAMES = {
    "money": "amounts of money",
    "number": "numbers",
    "date": "dates",
    "time": "times of day",
    "duration": "durations",
    "percent": "percentages",
    "id": "ids",
    "phone": "phone numbers",
    "name": "names",
}
# Statuses in the order the reason lists them, with their titles.
STATUSES = (
    ("missing", "missing"),
    ("negated", "stated only under negation"),
    ("asked", "only asked, never stated"),
    ("hedged", "stated only with a hedge"),
    ("part", "stated only as an unlabelled part of a sum"),
    ("swapped", "stated of another fact's subject"),
    ("conflicting", "conflicting"),
)


@dataclass(frozen=True)
class FactResult:
    fact: Fact
    status: str  # stated, or one of STATUSES
    detail: str = ""

    @property
    def label(self) -> str:
        return state_fact(self.fact) + (f" ({self.detail})" if self.detail else "")


def judge(fact: Fact, reading: Reading, index: int | None = None) -> FactResult:
    """Whether the answer states `fact` (number `index` of the task's facts): asserted, about its
    subject, with no rival, not stuffed."""
    seen: dict[str, str] = {}
    stated: list[Occurrence] = []
    denied: list[Claim] = []
    for alt in alternatives(fact):
        for occurrence in reading.occurrences(alt):
            status, detail = _status(occurrence, alt, reading, index)
            if status == "stated":
                stated.append(occurrence)
            elif occurrence.claim is not None and occurrence.polarity == DENIED and alt.kind not in _NAMING:
                denied.append(occurrence.claim)
            seen.setdefault(status, detail)
    for occurrence in stated:
        if not any(_takes_back(claim, occurrence.claim) for claim in denied):
            return FactResult(fact, "stated")
    if stated:
        return FactResult(fact, "negated", "taken back where it is said again")
    for status in ("conflicting", "swapped", "asked", "hedged", "part", "negated"):
        if status in seen:
            return FactResult(fact, status, seen[status])
    return FactResult(fact, "missing")


# Kinds that name a record or a person: "Claim CL1 does not have enough cover" says something of
# CL1, it does not deny that the record is CL1, so a negated clause about it takes nothing back.
_NAMING = frozenset({"id", "name"})


def _takes_back(denial: Claim, stated: Claim | None) -> bool:
    """Whether a denial of the same value said again after it (`Your refund is $40. That $40 is
    wrong.`) takes back the stated one: said of nothing (`that figure`) or of the same subject; a denial of
    the same value of another subject (`I did not charge the $40 fee`) does not."""
    if stated is None or denial.start < stated.end:  # a denial before the statement ("You feared it
        return False  # wouldn't be $40, but it is $40") is what the statement answers
    return not denial.subject.words or same_subject(denial.subject, stated.subject)


def _status(occurrence: Occurrence, alt: Alternative, reading: Reading, index: int | None) -> tuple[str, str]:
    if occurrence.polarity == DENIED:
        return "negated", ""
    claim = occurrence.claim
    if claim is not None and claim.part:
        return "part", ""
    if claim is not None and index is not None:
        owner = reading.rivals.swapped(index, claim)
        if owner is not None:
            said = " ".join(sorted(claim.subject.said)) or "another subject"
            return "swapped", f"said of {said!r}, the subject of another fact"
    if alt.kind != "phrase":
        problem = reading.stuffed(alt.kind)
        if problem:
            return "conflicting", problem
        if claim is not None and alt.noun:  # a count of a noun: its rivals are the other counts of it
            counted = reading.rivals.joined(claim) or reading.rivals.rival_count(claim, alt.noun)
            if counted is not None:
                return "conflicting", f"hedged with {reading.parsed.text[counted.start : counted.end]!r}"
        elif claim is not None:
            rival = reading.rivals.rival(index, claim, alt)
            if rival is not None:
                return "conflicting", rival.why
    if occurrence.polarity == ASKED:
        return "asked", ""
    if occurrence.polarity == HEDGED:
        return "hedged", ""
    return "stated", ""


def forbidden_stated(fact: Fact, claims: Claims) -> bool:
    """Whether the answer says a forbidden fact at all: asserted, hedged or asked, in a clause
    with no negation before it (`it won't leave on time` does not say `on time`)."""
    reading = Reading(claims, [])
    return any(
        o.polarity != DENIED and not claims.parsed.in_negated_clause(o.start)
        for alt in alternatives(fact)
        for o in reading.occurrences(alt)
    )


def fact_stated(fact: Fact, answer: str) -> bool:
    """Whether `answer` states `fact` (as graded when it is the task's only fact)."""
    parsed = parse(answer)
    if not_a_reply(parsed):
        return False
    reading = Reading(claims_of(parsed), [alternatives(fact)])
    return reading.dump() is None and judge(fact, reading).status == "stated"


def grade_answer(
    facts: Sequence[Fact],
    forbidden: Sequence[Fact],
    answer: str | None,
    reference: str | Sequence[str] | None = None,
) -> tuple[bool, str]:
    """Whether `answer` states every fact and no forbidden one, and why not. `reference` is the
    task's own words on what the answer says (the check's requirement, then what the user
    wants), read for what each fact is about (`_reference`)."""
    if not answer or not answer.strip():
        return False, "no final answer was given"
    parsed = parse(answer)
    document = not_a_reply(parsed)
    if document:  # a pasted policy or tool result: no claim of it is read (bounded work on long text)
        return False, document
    claims = claims_of(parsed)
    reading = Reading(claims, [alternatives(f) for f in facts], fact_subjects(facts, reference))
    dump = reading.dump()
    if dump:  # not a reply: it fails whatever it states, and its facts are not read one by one
        return False, dump
    results = [judge(fact, reading, i) for i, fact in enumerate(facts)]
    problems: list[str] = []
    for status, title in STATUSES:
        listed = [r.label for r in results if r.status == status]
        if listed:
            problems.append(f"{title}: " + ", ".join(listed))
    wrong = [state_fact(f) for f in forbidden if forbidden_stated(f, claims)]
    if wrong:
        problems.append("states what is not so: " + ", ".join(wrong))
    return not problems, "; ".join(problems) or f"all {len(facts)} facts stated"


__all__ = ["ALLOWANCE", "ASSERTED", "FactResult", "Reading", "fact_stated", "grade_answer", "judge"]
