"""Rivals of a stated value: other values of its kind that the answer offers for the same thing,
and values bound to another fact's subject (`_judging`, rule 2).

The claim that states a fact (S) has a rival R, another value of the same kind that is not taken
back (denied), when:

- **offered with it**: a hedge word (`or`, `either`, `maybe`, `perhaps`, `possibly`, `probably`)
  or a `/` among at most HEDGE_WORDS words between the two in one sentence ("$39.98 or $40",
  "$39.98/$40", "$40, or maybe $39.98"), or nothing but list punctuation between them (a bare
  list: "$39.98, $12.00, $7.50"; guesses: "$39.98? $40?"); a colon or brackets introduce an
  explanation, not alternatives;
- **hedged or asked, and not about something else**: R is hedged or asked anywhere in the answer
  and names nothing of its own (all its words are S's or the fact's, and no id or date tells it
  apart): "The refund is $40. Could it be $45? Perhaps $50."; not "Should I also refund the $6
  shipping fee?";
- **said of the same subject**: R is asserted with S's subject (the same content words and no
  id or date that tells them apart, or no subject at all in both, or R's inherited from the
  value before it): "The refund is $40. The refund is $45.", "$40. $45.", "It's $40. It's $45.";
- **said of the fact's subject**: the fact has a subject (`_reference`) and all of R's words are
  the fact's or S's, one of them distinctive: "Your refund is $40. You get $45 back."

Not rivals: values that are themselves the task's facts (each graded on its own), unless said of
the fact's subject rather than their own; values of another record or subject ("the $12 refund
for order #W2", "the $6 fee", "2:30 PM for Ravi", "9:10 AM ET (6:10 AM PT)"); the parts of an
itemisation and its whole (`_claims`). A count with a noun is a rival of any other count of that
noun in any sentence, except its parts after it and the one whole it is part of (`rival_count`).

A short id read as a number (a card's last four) has as rivals only numbers of its shape.

A value stated of another fact's subject and not of its own is **swapped** ("departs 9:10,
arrives 7:05" when the truth is the reverse): it does not state its fact.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mcpsim.grading._answers._alternatives import Alternative, noun_follows
from mcpsim.grading._answers._claims import TYPED, Claim, Claims
from mcpsim.grading._answers._parsed import Mention
from mcpsim.grading._answers._polarity import ASKED, DENIED, HEDGED
from mcpsim.grading._answers._reference import FactSubject
from mcpsim.grading._answers._subjects import marked_apart, same_subject, words_within
from mcpsim.grading._answers._text import WORD

_HEDGE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably)\b|/", re.IGNORECASE)
_BARE = re.compile(r"[\s,;/|\"'?]*")
_WHOLE = re.compile(r"\b(?:out\s+of|of)(?:\s+(?:the|all|your|its|their|his|her))?\s+$", re.IGNORECASE)
HEDGE_WORDS = 4  # `$39.98, or maybe even $40`; a longer stretch joins other things (`to your Visa or PayPal`)


def _shape(token: str) -> str:
    return re.sub(r"[A-Za-z]", "a", re.sub(r"\d", "9", token.lstrip("#")))


@dataclass(frozen=True)
class Rival:
    claim: Claim
    why: str


class RivalFinder:
    """Finds the rivals of stated values in one answer, against one task's facts."""

    def __init__(self, claims: Claims, facts: Sequence[Sequence[Alternative]], subjects: Sequence[FactSubject]) -> None:
        """`facts` holds each fact's alternatives and `subjects` each fact's subject (or nothing,
        when there is no fact to bind)."""
        self.claims = claims
        self.parsed = claims.parsed
        self.asked = [alt for alts in facts for alt in alts]
        self.subjects = list(subjects)
        self.owners = [(alt, i) for i, alts in enumerate(facts) for alt in alts]
        # mentions are sorted by start; the running maximum of their ends finds the first that reaches a point
        ends, reach = [], -1
        for mention in self.parsed.mentions:
            reach = max(reach, mention.end)
            ends.append(reach)
        self._ends = ends

    def answers_a_fact(self, mention: Mention) -> bool:
        return any(alt.accepts(mention) for alt in self.asked)

    def fact_of(self, mention: Mention) -> int | None:
        for alt, index in self.owners:
            if alt.accepts(mention):
                return index
        return None

    def swapped(self, fact: int, claim: Claim) -> int | None:
        """The other fact whose subject a claim of this fact's value is said of, and not its own:
        its own words (those no other claim of its kind in the answer shares: `cancelling for a
        change of plans` and `cancelling because you're sick` share `cancel`) name a distinctive
        word of the other fact's subject and none of this fact's, which has some."""
        if claim.kind not in TYPED or not self.subjects:
            return None
        own = self.subjects[fact]
        words = self._own_words(claim)
        if not own.distinctive or own.names(words):
            return None
        for other, subject in enumerate(self.subjects):
            if other != fact and subject.kinds & own.kinds and subject.names(words):
                return other
        return None

    def _own_words(self, claim: Claim) -> tuple[frozenset[str], ...]:
        others = [w for c in self.claims.of_kind(claim.kind) if c is not claim for w in c.subject.words]
        return tuple(w for w in claim.subject.words if not any(w & o for o in others))

    def rival(self, fact: int | None, stating: Claim, alt: Alternative) -> Rival | None:
        """A rival of the claim `stating` that states fact number `fact` (see the docstring)."""
        joined = self.joined(stating)
        if joined is not None:
            return Rival(joined, f"hedged with {self._shown(joined)!r}")
        if stating.kind not in TYPED:
            return None
        own = self.subjects[fact] if fact is not None and self.subjects else None
        shape = _shape(self._shown(stating)) if alt.kind == "id" and stating.kind == "number" else None
        for other in self.claims.of_kind(stating.kind):
            if other is stating or other.polarity == DENIED or other.part or alt.accepts(other.mention):
                continue
            if other.mention.value == stating.mention.value:
                continue
            if shape is not None and _shape(self._shown(other)) != shape:
                continue  # a short id (`4186`) has as rivals only tokens of its shape (`4187`)
            if other.start < stating.end and stating.start < other.end:
                continue
            if other.group >= 0 and other.group == stating.group:
                continue
            why = self._why(own, fact, stating, other)
            if why:
                return Rival(other, why)
        return None

    def _why(self, own: FactSubject | None, fact: int | None, stating: Claim, other: Claim) -> str | None:
        about_fact = own is not None and own.claims_it(other.subject, stating.subject.words)
        owner = self.fact_of(other.mention)
        if owner is not None and owner != fact:  # another fact's value: a rival only if said of this one
            if about_fact and not (self.subjects and self.subjects[owner].claims_it(other.subject)):
                return f"{self._shown(other)!r} is said of its subject"
            return None
        if self.answers_a_fact(other.mention):
            return None
        if other.polarity in (HEDGED, ASKED):
            if not marked_apart(other.subject, stating.subject) and self._within(other, stating, own):
                verb = "asked" if other.polarity == ASKED else "offered"
                return f"{self._shown(other)!r} is {verb} as well"
            return None
        if same_subject(other.subject, stating.subject):
            return f"{self._shown(other)!r} is said of the same subject"
        if about_fact and not marked_apart(other.subject, stating.subject):
            return f"{self._shown(other)!r} is said of its subject"
        return None

    @staticmethod
    def _within(other: Claim, stating: Claim, own: FactSubject | None) -> bool:
        """Whether all of `other`'s words are the stating claim's or the fact's (none of its own)."""
        words = (*stating.subject.words, *(own.subject.words if own else ()))
        return words_within(other.subject, words)

    def _shown(self, claim: Claim) -> str:
        return self.parsed.text[claim.start : claim.end]

    def joined(self, stating: Claim) -> Claim | None:
        """Another value of the same kind, in the same sentence, joined by a hedge; or a bare list
        (`$39.98, $40`; across sentences only as guesses: `$39.98? $40?`, one sentence apart)."""
        sentence = self.parsed.sentence(stating.start)
        for other in self.claims.of_kind(stating.kind):
            mention = other.mention
            if abs(self.parsed.sentence(other.start) - sentence) > 1:
                continue
            overlaps = other.start < stating.end and stating.start < other.end
            if other.polarity == DENIED or overlaps or mention.value == stating.mention.value:
                continue
            if self.answers_a_fact(mention) or (other.group >= 0 and other.group == stating.group):
                continue
            low, high = sorted([(stating.start, stating.end), (other.start, other.end)])
            if self._joined(low[1], high[0], stating.kind, mention.sentence == sentence):
                return other
        return None

    def _joined(self, start: int, end: int, kind: str, one_sentence: bool) -> bool:
        between = list(self.parsed.text[start:end])
        mentions = self.parsed.mentions
        first = max(0, bisect.bisect_left(self._ends, start))  # only the mentions that reach into the gap
        for mention in mentions[first:]:
            if mention.start >= end:
                break
            for i in range(max(mention.start, start), min(mention.end, end)):
                between[i - start] = " "
        rest = "".join(between)
        if kind != "name" and _BARE.fullmatch(rest) and (one_sentence or "?" in rest):  # names: prose lists
            return True
        return one_sentence and _HEDGE.search(rest) is not None and len(WORD.findall(rest)) <= HEDGE_WORDS

    def rival_count(self, stating: Claim, noun: str) -> Claim | None:
        """Another count of the fact's noun anywhere in the answer, in any sentence: `You have 3
        bills. You have 4 bills.` and `14 visitors? 15 visitors?` are guesses. Not a rival: a
        count after the fact's that is a part of it (`3 bills: 1 bill is overdue and 2 bills are
        paid`), or the one whole it is part of (`3 bills are unpaid, out of 10 bills`)."""
        mention = stating.mention
        wholes = 0
        for other in self.claims.of_kind("number"):
            if other.polarity == DENIED or other.mention.value == mention.value or self.answers_a_fact(other.mention):
                continue
            if not noun_follows(self.parsed, other.mention, noun):
                continue
            later = other.start > stating.end
            if later and isinstance(other.mention.value, int | float) and isinstance(mention.value, int | float):
                if other.mention.value < mention.value:
                    continue  # a part of the count
                before = self.parsed.text[max(0, other.start - 16) : other.start]
                if wholes == 0 and _WHOLE.search(before):
                    wholes += 1
                    continue  # the whole it is part of
            return other
        return None
