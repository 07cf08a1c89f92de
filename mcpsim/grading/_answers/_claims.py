"""An answer read as claims: each typed value (and each name) with its subject and how it is said.

A claim is a mention of `_parsed` with its subject (`_subjects`: the words its clause binds it
to) and its polarity (`_polarity`: asserted, denied, hedged or asked). Reading the claims of an
answer together adds what one mention alone cannot show:

- **Ellipsis.** A value said with no subject at all (`It's $45.`, `$45.`, `Or $45?`) is about
  what the value of its kind before it was about.
- **Alternatives.** A sentence that opens with `Or` or `Alternatively` hedges the value of the
  same kind before it too (`It's $40. Or $45.`).
- **Replacements.** A value right after a correction (`sorry`, `I mean`, `or rather`, `make that`,
  `actually`, `correction:`, `no`, `wait`) takes back the value of its kind before it when both
  are about the same thing (`$40, sorry, $45`; `The refund is $40. Actually, it's $45.`), and
  not otherwise (`Actually, the $6 fee was waived`).
- **Money without a marker.** A plain number is also money where nothing else could be meant: a
  word of money in its clause (`the refund is 39.98`, `Total: 1,006`, `you owe 4`) and no other
  noun right after it (`the total of 3 items` is a count).
- **Elided days.** A day number right after a date, as its alternative or its range's end, is a
  date of that month (`May 25 or 26`, `May 25-26`).
- **Ranges.** The end of a range of times or dates (`from 4pm to 5pm`) is no rival of its start.
- **Sums.** Values of money in one sentence (the whole may stand in the sentence before) where
  one is the sum of at least two others, each added or taken away as the words before it say
  (`minus`, `less`, `after`, `-`), form an itemisation: `$10 + $5 + $25 = $40`, `$740: the $790
  fare minus the $100 fee, plus the $50 bag fee`. The parts are no rivals of the whole nor of each
  other; a part with no subject of its own (`$10 + $5`) states nothing by itself.

`Claims` is what item readers build on: `of_kind`, `polarity_at` (how any stretch of the text
is said, for phrases and verbs) and `subject_of`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations
from typing import cast

from mcpsim.grading._answers._parsed import CACHED_LENGTH, FUNCTION_WORDS, DateValue, Mention, Parsed, parse
from mcpsim.grading._answers._polarity import ASSERTED, DENIED, HEDGED, Stance
from mcpsim.grading._answers._subjects import NO_SUBJECT, ROLES, Subject, SubjectReader, is_content, same_subject

TYPED = ("money", "number", "date", "time", "duration", "percent", "id", "phone")
SUM_VALUES = 8  # values of one sentence tried as a sum and its parts (2**8 subsets at most)
# A correction just before a value: an interjection and its comma (`sorry,`, `actually,`, `no,`,
# `wait,`, `correction:`), or words that correct (`I mean`, `or rather`, `make that`).
_CORRECTION = re.compile(
    r"(?:\b(?:sorry|actually|oops|no|nope|wait|correction|update|rather)\s*[,:;!-]|\bi\s+mean|\bi\s+meant|"
    r"\bor\s+rather|\bmake\s+(?:that|it)|\bscratch\s+that|\bi\s+misspoke|\bmy\s+(?:mistake|bad)|"
    r"\bactually\s+(?:it's|it\s+is|that's|that\s+is)|"
    r"\b(?:corrected|updated|changed|revised|amended)\s+(?:it\s+)?to)\W*(?:[\w']+\W+){0,3}$",
    re.IGNORECASE,
)
_MARKER_WORDS = frozenset({"wait", "correction", "update", "mean", "meant", "oops", "mistake", "bad", "misspoke"})
# A sum is said as one: a word of sums anywhere in its sentences (`total`, `minus`, `net`), or
# an operator, or an explanation after a colon or in brackets, between its first value and its last
# (`$10 + $30 = $40`, `$740: the $790 fare minus ...`, `$40 (the $10 fee and the $30 fare)`). A
# colon or a dash before all of them only introduces a list (`Here's what I found: $2,189.31,
# $1,005.00, $1,184.31`), even when one of its values happens to add up the others.
_EXPLAINED = re.compile(r"[+=:(\u00d7]|\s[-\u2212]\s")
_ARITHMETIC = re.compile(
    r"\b(?:plus|minus|less|equals?|totals?|totalling|totaling|sum|adds?\s+up|"
    r"comes?\s+to|made\s+up|of\s+which|breakdown|including|includes?|consists?|after|net)\b",
    re.IGNORECASE,
)
_OR = re.compile(r"\bor\b|/|\?", re.IGNORECASE)
_ELIDED = re.compile(r"\s*(?:or|to|-|/|and|through|until)\s*", re.IGNORECASE)
_RANGE = re.compile(r"\s*(?:to|until|till|through|thru|-|and)\s*", re.IGNORECASE)
_MONEY_WORDS = frozenset(
    {
        *(w for w, role in ROLES.items() if role in ("@refund", "@cost", "@pay", "@balance", "@total")),
        *("fee", "fees", "credit", "credited", "deposit", "deposited", "amount", "difference", "worth"),
        *("spend", "spent", "interest", "limit", "due", "withdraw", "withdrew", "withdrawal", "transfer"),
        *("come", "comes", "came"),  # `it comes to 1,006`
    }
)
_SHARE = frozenset({"each", "per", "apiece", "in", "total"})
# A number offered right after an amount of money, as its alternative or correction: `$40 or 45`,
# `$40. No wait, forty-five.`, `Is it $40? Or 45?`
_OFFERED = re.compile(  # matched from the amount's end (`match` with a position: no `^`)
    r"[^.!?;\n]{0,12}[.!?;]?\s*(?:\b(?:or|maybe|perhaps|possibly|no|nope|wait|sorry|actually|rather|i\s+mean)\b[\s,.!?-]*)+$",
    re.IGNORECASE,
)
_SKIPPED = FUNCTION_WORDS | {"now", "currently", "just", "only", "approximately", "about", "around"}
_MINUS = re.compile(
    r"(?:\bminus|\bless|\bafter|\bdeduct\w*|\bsubtract\w*|\bwithout|[-\u2212])\s*(?:(?:the|a|an|your|its|his|her)\s+)?$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Claim:
    """A value the answer states, what it is said about, and how it is said."""

    mention: Mention
    subject: Subject
    polarity: str
    group: int = -1  # the itemisation (a sum and its parts) it belongs to
    part: bool = False  # a part of its sum with no subject of its own: it states nothing alone
    inherited: bool = False  # its subject is the one of the value before it (`It's $45.`)

    @property
    def kind(self) -> str:
        return self.mention.kind

    @property
    def start(self) -> int:
        return self.mention.start

    @property
    def end(self) -> int:
        return self.mention.end


class Claims:
    """The claims of one parsed answer."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.stance = Stance(parsed)
        self.reader = SubjectReader(parsed)
        claims = [
            Claim(
                m,
                self.reader.subject(m),
                self.stance.polarity(
                    m.start,
                    m.end,
                    m.kind != "name",
                    m.negated,
                    m.kind == "number",
                    m.kind not in ("name", "id", "number"),
                ),
            )
            for m in parsed.mentions
        ]
        claims += _unmarked_money(claims, self.reader) + _elided_days(claims, parsed.text)
        claims.sort(key=lambda c: (c.start, c.kind))
        _alternatives(claims, self.stance)
        _ranges(claims, parsed.text)
        _sums(claims, self.stance, parsed.text)
        _ellipses(claims)
        _replacements(claims, self.stance, parsed.text)
        self.claims = tuple(claims)

    def of_kind(self, kind: str) -> list[Claim]:
        return [c for c in self.claims if c.kind == kind]

    def polarity_at(self, start: int, end: int, typed: bool = False) -> str:
        """How the stretch [start, end) is said (a phrase, a verb)."""
        return self.stance.polarity(start, end, typed)

    def subject_of(self, mention: Mention) -> Subject:
        return self.reader.subject(mention)


def claims_of(parsed: Parsed) -> Claims:
    """The claims of a parsed text; those of short texts are cached with their parse."""
    if len(parsed.text) <= CACHED_LENGTH:
        return _claims_cached(parsed.text)
    return Claims(parsed)


@lru_cache(maxsize=1024)
def _claims_cached(text: str) -> Claims:
    return Claims(parse(text))


def read_claims(text: str) -> Claims:
    return claims_of(parse(text))


def _previous(claims: list[Claim], index: int, kind: str, before: int) -> int | None:
    for j in range(index - 1, -1, -1):
        if claims[j].kind == kind and claims[j].end <= before:
            return j
    return None


def _unmarked_money(claims: list[Claim], reader: SubjectReader) -> list[Claim]:
    """A plain number said of money with no currency marker (`the refund is 39.98`, `Total:
    1,006`, `you owe 4`), where nothing but money could be meant: the nearest word before it
    (function words passed) is a word of money (`refund`, `total`, `fee`, `balance`, `paid`, ...;
    not `your Visa ending 2360`), or it is offered right after an amount as its alternative or
    correction (`$40 or 45`, `$40. No wait, forty-five.`); and no other noun comes right after it."""
    found = []
    last_money: Claim | None = None
    for claim in claims:
        if claim.kind == "money":
            last_money = claim
        if claim.kind != "number":
            continue
        nearest = next((w for w in reader.words_before(claim.mention, 4) if w not in _SKIPPED), None)
        offered = last_money is not None and _OFFERED.match(reader.text, last_money.end, claim.start) is not None
        if nearest not in _MONEY_WORDS and not offered:
            continue
        if not reader.text[claim.start : claim.start + 1].isdigit() and not offered:
            continue  # digits only: `one worth $250` is no dollar
        after = reader.next_word(claim.mention)
        if after and after not in _MONEY_WORDS and is_content(after) and after not in _SHARE:
            continue  # `3 items`, `2 orders`: a count
        found.append(replace(claim, mention=replace(claim.mention, kind="money")))
    return found


def _elided_days(claims: list[Claim], text: str) -> list[Claim]:
    """`May 25 or 26`, `May 25-26`: a day number right after a date, as its alternative or the
    end of its range, is a date of the same month."""
    found = []
    for before, after in zip(claims, claims[1:], strict=False):
        if before.kind != "date" or after.kind != "number" or not _ELIDED.fullmatch(text[before.end : after.start]):
            continue
        day = after.mention.value
        if isinstance(day, float) and day.is_integer() and 1 <= day <= 31:
            year, month, _ = cast(DateValue, before.mention.value)
            found.append(replace(after, mention=replace(after.mention, kind="date", value=(year, month, int(day)))))
    return found


def _ranges(claims: list[Claim], text: str) -> None:
    """`from 4pm to 5pm`, `May 18 - May 20`: the end of a range of times or dates is its own
    subject, no rival of the start."""
    for i in range(1, len(claims)):
        start, end = claims[i - 1], claims[i]
        if start.kind == end.kind and end.kind in ("time", "date") and _RANGE.fullmatch(text[start.end : end.start]):
            words = (*end.subject.words, frozenset({"@end"}))
            claims[i] = replace(end, subject=replace(end.subject, words=words))


def _alternatives(claims: list[Claim], stance: Stance) -> None:
    """`It's $40. Or $45.`: the value before an alternative is hedged too."""
    seen: set[tuple[int, str]] = set()
    for i, claim in enumerate(claims):
        sentence = stance.sentence_at(claim.start)
        if not sentence.alternative or (sentence.start, claim.kind) in seen:
            continue
        seen.add((sentence.start, claim.kind))
        j = _previous(claims, i, claim.kind, sentence.start)
        if j is not None and claims[j].polarity == ASSERTED:
            claims[j] = replace(claims[j], polarity=HEDGED)


def _ellipses(claims: list[Claim]) -> None:
    """A value said with no subject is about what the value of its kind before it was about."""
    last: dict[str, Subject] = {}
    for i, claim in enumerate(claims):
        if claim.kind not in TYPED:
            continue
        if claim.subject.bare and claim.group < 0:
            inherited = last.get(claim.kind, NO_SUBJECT)
            if not inherited.empty:
                claims[i] = replace(claim, subject=inherited, inherited=True)
        if not claims[i].part:
            last[claim.kind] = claims[i].subject


def _replacements(claims: list[Claim], stance: Stance, text: str) -> None:
    """`$40, sorry, $45`: a value right after a correction takes back the one before it."""
    for i, claim in enumerate(claims):
        if claim.kind not in TYPED or claim.polarity == DENIED:
            continue
        sentence = stance.sentence_at(claim.start)
        if not _CORRECTION.search(text, max(sentence.start, claim.start - 60), claim.start):
            continue
        j = _previous(claims, i, claim.kind, claim.start)
        if j is None:
            continue
        earlier = claims[j]
        near = stance.parsed.sentence(earlier.start) >= stance.parsed.sentence(claim.start) - 1
        if near and earlier.mention.value != claim.mention.value and earlier.polarity != DENIED:
            said = claim.subject.said - _MARKER_WORDS  # `No wait, 45`: `wait` is the marker, not a subject
            if same_subject(earlier.subject, claim.subject) or claim.inherited or not said:
                claims[j] = replace(earlier, polarity=DENIED)


def _sums(claims: list[Claim], stance: Stance, text: str) -> None:
    """Marks the itemisations: a whole and at least two parts that add up to it, said as a sum (an
    operator, a total, a colon or brackets between them) and not as alternatives (`or`, `/`)."""
    by_sentence: dict[int, list[int]] = {}
    for i, claim in enumerate(claims):
        if claim.kind == "money" and claim.polarity == ASSERTED:
            by_sentence.setdefault(stance.parsed.sentence(claim.start), []).append(i)
    group = 0
    for sentence, members in sorted(by_sentence.items()):
        if len(members) < 2 or len(members) > SUM_VALUES:
            continue
        wholes = members + [i for i in by_sentence.get(sentence - 1, []) if claims[i].group < 0]
        found = _best_sum(claims, members, wholes, text)
        if found is None:
            continue
        whole, parts = found
        low = min(claims[i].start for i in (whole, *parts))
        high = max(claims[i].end for i in (whole, *parts))
        said = stance.sentence_at(claims[whole].start).start, stance.sentence_at(claims[parts[-1]].start).end
        if _OR.search(text, low, high) or not (_ARITHMETIC.search(text, *said) or _EXPLAINED.search(text, low, high)):
            continue  # offered as alternatives, or a list with no sign of a sum
        claims[whole] = replace(claims[whole], group=group)
        for i in parts:
            claims[i] = replace(claims[i], group=group, part=claims[i].subject.empty)
        group += 1


def _best_sum(claims: list[Claim], members: list[int], wholes: list[int], text: str) -> tuple[int, list[int]] | None:
    signs = {i: -1 if _MINUS.search(text, max(0, claims[i].start - 24), claims[i].start) else 1 for i in members}
    cents = {i: round(float(claims[i].mention.value) * 100) for i in {*members, *wholes}}  # type: ignore[arg-type]
    for size in range(len(members), 1, -1):
        for whole in wholes:
            for parts in _subsets([i for i in members if i != whole], size):
                if sum(signs[i] * cents[i] for i in parts) == cents[whole] and cents[whole] > 0:
                    return whole, list(parts)
    return None


def _subsets(items: list[int], size: int) -> Iterator[tuple[int, ...]]:
    if size <= len(items):
        yield from combinations(items, size)
