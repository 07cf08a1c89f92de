"""How a stretch of an answer is said: asserted, denied, hedged or asked.

- **Denied.** A negation directly before it (`Parsed.negated`: `not $40`, `instead of $40`,
  `rather than $40`); a correction right after a typed value, in its clause (`$40 is incorrect`,
  `$40 was wrong`, `the $40 figure isn't right`, `the $40 refund is wrong`, `$40, which is not
  correct`, `$40 (wrong)`); or a
  clause that takes back what came before it in its sentence, or the sentence before when it opens
  one (`..., but that is wrong`, `That's not right.`, `Scratch that.`, `Disregard the above.`).
  The replacement of one value by another (`$40, sorry, I mean $45`, `$40. Actually, it's $45.`)
  is read in `_claims`, which knows subjects.
- **Asked.** In a question: a sentence ending in `?`, from its start or, when a clause of it
  asks on its own after a comma, colon or dash (`Your refund is $40, is there anything else?`),
  from that clause on; a tag (`..., right?`, `..., correct?`) asks the whole sentence.
- **Hedged.** A hedge in its clause, before or after it within REACH characters (`maybe`,
  `perhaps`, `possibly`, `probably`, `presumably`, `might`, `may be`, `could (end up) being`, `it
  may`, `I think`, `I believe`, `I guess`, `I suppose`, `not sure`, `unless`, `unconfirmed`,
  `either ... or`, `or so`, `give or take`, `alt:`, `is possible`, `is likely`), where a clause runs
  between commas and words such as `and`, `but`, `because` (a short label before a colon belongs
  to its value); a sentence that opens with a hedge and a comma (`Not sure, but ...`), or ends with
  one as a tag (`..., I think.`, `(unconfirmed)`), is hedged whole; a sentence that opens with `Or`
  or `Alternatively` offers an alternative (`_claims` hedges the value before it too).

Everything else is asserted. Only the answer's own words count: `should`, `would`, `will`,
`expected`, `estimated`, `could` (without `be`) and the `may` of permission (`you may return it`;
`it may arrive` hedges) are not hedges.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property

from mcpsim.grading._answers._parsed import Parsed

ASSERTED, DENIED, HEDGED, ASKED = "asserted", "denied", "hedged", "asked"
REACH = 160  # characters read on each side of a value for a hedge or a correction in its clause

_SEGMENT = re.compile(r"[,;:()\[\]]|\s-\s|\n")
_OPENER = re.compile(
    r"\b(?:and|but|because|since|so|while|whereas|although|though|however|which|who|whom|whose|where|when|"
    r"then|until)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|presumably|might|mightn't|guess|guessing|guessed|unsure|uncertain|"
    r"not\s+(?:sure|certain)|(?:may|could|might)\s+(?!not\b)(?:[a-z]+\s+){0,3}?(?:be|being)\b|"
    r"(?:it|this|that|they|there|which|he|she|these|those)\s+may\b(?!\s+(?:take|apply|need|require))|"
    r"(?:i|we)\s+(?:think|believe|suppose|assume|reckon|guess)|(?:i|we)'d\s+(?:say|guess|estimate)|"
    r"if\s+i\s+(?:recall|remember)|or\s+so|give\s+or\s+take|thereabouts|unconfirmed|tentative(?:ly)?|unless|"
    r"alt|alternative(?:ly)?|ballpark|"
    r"if\s+i'm\s+(?:reading|not\s+mistaken|right)|if\s+memory\s+serves|as\s+far\s+as\s+i\s+(?:can\s+tell|know)|"
    r"(?:is|are|'s|seems?|looks?)\s+(?:also\s+|quite\s+|very\s+|more\s+)?(?:possible|likely(?!\s+to\b)|plausible))\b",
    re.IGNORECASE,
)
# A hedge said of the whole sentence: a phrase that opens it (`Not sure, but ...`, `If I'm not
# mistaken, ...`) or closes it (`..., I think.`, `... (unconfirmed).`).
_WHOLE_HEDGE = (
    r"(?:i\s+(?:think|believe|guess|suppose|suspect)|i'd\s+(?:say|guess)|maybe|perhaps|probably|possibly|"
    r"presumably|roughly|or\s+so|give\s+or\s+take|at\s+a\s+guess|unconfirmed|tentatively|tentative|"
    r"ballpark|alternatively|alt|"
    r"if\s+i\s+(?:recall|remember)(?:\s+(?:correctly|right))?|if\s+i'm\s+(?:not\s+mistaken|right|reading\s+\w+\s+right)|"
    r"if\s+memory\s+serves|unless\s+i'm\s+(?:wrong|mistaken)|as\s+far\s+as\s+i\s+(?:know|can\s+tell)|"
    r"(?:(?:but\s+|though\s+)?(?:i'm|i\s+am)\s+)?not\s+(?:sure|certain|100%\s+sure)(?:\s+but)?|"
    r"my\s+(?:best\s+)?guess\s+is|to\s+be\s+confirmed|tbc)"
)
_HEDGE_TAG = re.compile(rf"(?:,|\(|\s-)\s*{_WHOLE_HEDGE}\s*\)?\s*[.!?;]*\s*$", re.IGNORECASE)
_HEDGE_OPENING = re.compile(rf"^\W*{_WHOLE_HEDGE}\s*[,:-]", re.IGNORECASE)
_EITHER = re.compile(r"\beither\b(?=.*\bor\b)", re.IGNORECASE | re.DOTALL)
_ALTERNATIVE_OPENING = re.compile(
    r"^\W*(?:(?:hmm+|well|um+|uh+|oh|so|and|but|then\s+again|actually)\W+)*(?:or|alternatively|either\s+that\s+or)\b",
    re.IGNORECASE,
)
# A correction: `is wrong`, `was a mistake`, `is no longer valid`, `isn't right`, `is not correct`.
_WRONG = (
    r"(?:an?\s+)?(?:wrong|incorrect|inaccurate|mistaken|erroneous|untrue|false|outdated|obsolete|"
    r"mistake|error|typo|misprint)\b"
)
_RIGHT = r"(?:right|correct|accurate|true|valid|current|the\s+case|it)\b"
_ADVERB = r"(?:(?:also|definitely|actually|simply|clearly|just|totally|completely|entirely|plainly|in\s+fact)\s+)?"
# a copula in any of the ways a correction says it: `is`, `turned out to be`, `proved`, `seems to be`
_POSITIVE = (
    r"(?:(?:is|was|are|were|'s|has|have|had)\s+(?:now\s+)?(?:turned\s+out|proved|proven|been\s+shown)(?:\s+to\s+be)?|"
    r"(?:turns?|turned)\s+out(?:\s+to\s+be)?|(?:proves?|proved)(?:\s+to\s+be)?|"
    r"(?:seems?|seemed|looks?|looked|appears?|appeared)(?:\s+to\s+be)?|"
    r"is|was|are|were|'s|would\s+be|will\s+be)\s+"
)
_NEGATIVE = (
    r"(?:(?:is|was|are|were|'s|would|will)\s+not\s+(?:be\s+)?|(?:isn't|wasn't|aren't|weren't)\s+|"
    r"(?:wouldn't|won't)\s+be\s+|"
    r"(?:doesn't|does\s+not|didn't|did\s+not)\s+(?:seem|look|appear|turn\s+out|prove)(?:\s+to\s+be)?\s+)"
)
# A word that may name a value's subject (`refund`, `late fee`), not a joint, pronoun or preposition.
_NOUN = (
    r"(?!(?:and|or|but|so|yet|which|that|this|these|those|it|its|because|while|if|then|as|is|was|are|were|"
    r"be|been|has|have|had|will|would|can|could|to|for|back|from|in|into|on|at|of|by|with|you|your|i|we|"
    r"they|he|she|not|no|nothing|everything|all|each|per|plus|minus|total)\b)[a-z][\w'-]*"
)
_FALSE = r"(?:wrong|incorrect|inaccurate|untrue|false|no\s+longer\s+(?:right|correct|accurate|valid))\b"
_TRUE = r"(?:right|correct|accurate|true)\b"
_DENIAL = rf"(?:{_POSITIVE}{_ADVERB}(?:{_WRONG}|no\s+longer\s+{_RIGHT})|{_NEGATIVE}{_ADVERB}{_RIGHT})"
# Right after a typed value, in its clause: `$40 is incorrect`, `the $40 figure isn't right`,
# `$40, which was wrong`, `$40 - that's a mistake`, `$40 (wrong)`.
_AFTER_DENIAL = re.compile(
    r"^(?:\s+(?:figure|amount|number|value|total|price|sum|quote|estimate|date|time|one|id|code|reference))?"
    r"(?:\s*(?:,|\s-|\()\s*(?:(?:but|though|although|and|yet|however)\s+)?(?:which|that|this|it)"
    r"(?:\s+(?:figure|amount|number|value|total|price|sum|quote|estimate|date|time|one))?\s*|\s+)"
    rf"{_DENIAL}"
    rf"|^(?:\s+[a-z][\w'-]*){{0,2}}?\s*\(\s*(?:{_WRONG}|not\s+{_RIGHT})\s*\)",
    re.IGNORECASE,
)
# After an amount, date, time or duration (not an id: `the #W1 order is wrong` says the order was),
# the value's own noun, then a verdict on it that ends the clause: `the $40 refund is wrong.`,
# `$40 late fee isn't correct`; a noun of what happened (`the $40 charge was a mistake by the
# merchant`) says the charge was wrong, not its amount, and stays asserted.
_NOUN_DENIAL = re.compile(
    rf"^(?:\s+{_NOUN}){{1,2}}\s+(?:{_POSITIVE}{_ADVERB}{_FALSE}|{_NEGATIVE}{_ADVERB}{_TRUE})(?=\s*(?:[.;:!,)]|\s-|$))",
    re.IGNORECASE,
)
# A count taken back with its noun: `5 orders is wrong`, `the 3 bags figure isn't right` (a singular
# verb: `2 items were wrong` says the items were).
_COUNT_DENIAL = re.compile(
    r"^\s+[a-z][\w'-]*(?:\s+(?:figure|count|number|total))?\s+"
    rf"(?:(?:is|was|'s)\s+{_ADVERB}(?:{_WRONG}|no\s+longer\s+{_RIGHT})|"
    rf"(?:isn't|wasn't|is\s+not|was\s+not)\s+{_ADVERB}{_RIGHT})",
    re.IGNORECASE,
)
# A clause that takes back what came before it: `but that is wrong`, `That's not right.`, `Scratch that.`
_BACK_DENIAL = re.compile(  # matched at a clause's start (`match` with a position: no `^`)
    r"\W*(?:(?:but|and|however|though|although|yet|no|oh|sorry|oops|wait|actually)\W+)*"
    r"(?:(?:that|this|which|it|the\s+above|all\s+(?:of\s+)?that|the\s+(?:previous|earlier|above|last)\s+\w+|"
    rf"(?:that|this|the)\s+(?:figure|amount|number|value|answer|date|time|quote|estimate))\s*{_DENIAL}"
    r"(?=\s*(?:[.;:!,)\-]|$))"
    r"|(?:scratch|ignore|disregard|forget|strike)\s+(?:that|this|the\s+above|what\s+i\s+(?:said|wrote)|"
    r"the\s+(?:previous|earlier|last)\s+\w+|my\s+(?:previous|earlier|last)\s+\w+)"
    r"|i\s+(?:was\s+wrong|misspoke|made\s+a\s+mistake|got\s+(?:that|it)\s+wrong))",
    re.IGNORECASE,
)
_QUESTION_STARTS = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|can|could|would|will|shall|should|may|have|has|had|what|when|where|"
    r"which|who|how|why|isn't|aren't|wasn't|don't|doesn't|didn't|won't|wouldn't|shouldn't|couldn't|or|anything|"
    r"any|want|need|shall|right|correct|ok|okay|yes|no|true|agreed|sound|sounds)\b",
    re.IGNORECASE,
)
_TAG = re.compile(
    r"^\W*(?:right|correct|ok|okay|yes|no|true|agreed|isn't\s+it|is\s+it|is\s+that\s+(?:right|correct|ok)|"
    r"am\s+i\s+right|does\s+that\s+sound\s+right|wasn't\s+it|no)\W*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int
    end: int
    asked_from: int | None  # where its question starts, if it asks
    hedged: bool  # hedged whole (an opening or closing hedge)
    alternative: bool  # opens with `Or`: an alternative to what came before
    either: int | None  # where `either` stands, when an `or` follows it in the sentence


class Stance:
    """How each stretch of one parsed text is said (see the module docstring)."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.text = parsed.text
        self.segment_ends = [m.start() for m in _SEGMENT.finditer(self.text)]

    @cached_property
    def sentences(self) -> tuple[Sentence, ...]:
        starts = self.parsed.sentence_starts
        found = []
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(self.text)
            body = self.text[start:end]
            found.append(
                Sentence(
                    start,
                    end,
                    self._asked_from(start, body),
                    bool(_HEDGE_OPENING.search(body) or _HEDGE_TAG.search(body)),
                    bool(_ALTERNATIVE_OPENING.search(body)),
                    self._either(start, body),
                )
            )
        return tuple(found)

    @staticmethod
    def _either(start: int, body: str) -> int | None:
        match = _EITHER.search(body)
        return start + match.start() if match else None

    def _asked_from(self, start: int, body: str) -> int | None:
        stripped = body.rstrip()
        if not stripped.endswith("?"):
            return None
        if _QUESTION_STARTS.match(stripped):
            return start
        cuts = [m.end() for m in _SEGMENT.finditer(stripped)]
        for cut in reversed(cuts):
            rest = stripped[cut:]
            if _TAG.match(rest):
                return start
            if _QUESTION_STARTS.match(rest):
                return start + cut
        return start

    @cached_property
    def taken_back(self) -> tuple[tuple[int, int], ...]:
        """Stretches a later clause takes back (`..., but that is wrong`, `That's not right.`)."""
        spans = []
        sentences = self.sentences
        for i, sentence in enumerate(sentences):
            cuts = [sentence.start] + [
                m.end() for m in _SEGMENT.finditer(self.text, sentence.start, sentence.end) if m.end() < sentence.end
            ]
            for cut in cuts:
                if _BACK_DENIAL.match(self.text, cut, sentence.end):
                    if cut > sentence.start:
                        spans.append((sentence.start, cut))
                    elif i > 0:
                        spans.append((sentences[i - 1].start, sentence.start))
        return tuple(spans)

    def sentence_at(self, position: int) -> Sentence:
        return self.sentences[self.parsed.sentence(position)]

    def _segment(self, start: int, end: int) -> tuple[int, int]:
        """The stretch between commas (and other segment marks) around [start, end)."""
        i = bisect.bisect_left(self.segment_ends, start)
        low = self.segment_ends[i - 1] + 1 if i > 0 else 0
        j = bisect.bisect_left(self.segment_ends, end)
        high = self.segment_ends[j] if j < len(self.segment_ends) else len(self.text)
        sentence = self.sentence_at(start)
        return max(low, sentence.start), min(high, sentence.end)

    def hedged(self, start: int, end: int) -> bool:
        sentence = self.sentence_at(start)
        if sentence.hedged or sentence.alternative or (sentence.either is not None and start > sentence.either):
            return True
        low, high = self._segment(start, end)
        if low > 0 and self.text[low - 1] == ":":  # a label belongs to its value: `alt: $45`, `Maybe: $45`
            label = self._segment(low - 1, low - 1)[0]
            if len(self.text[max(label, low - 1 - REACH) : low - 1].split()) <= 3:
                low = label
        low, high = max(low, start - REACH), min(high, end + REACH)  # bounded: a hedge is near its value
        before = self.text[low:start]
        openers = list(_OPENER.finditer(before))
        if openers:
            before = before[openers[-1].end() :]
        after = self.text[end:high]
        cut = _OPENER.search(after)
        if cut:
            after = after[: cut.start()]
        return bool(_HEDGE.search(before) or _HEDGE.search(after))

    def denied_after(self, end: int, count: bool = False, quantity: bool = False) -> bool:
        """A correction right after a typed value: `$40 is incorrect`, `$40 (wrong)`; after a
        count, with its noun and a singular verb: `5 orders is wrong` (`2 items were wrong` says the
        items were); after a `quantity` (an amount, a date, a time...), with its noun: `the $40
        refund is wrong`."""
        sentence = self.sentence_at(max(0, end - 1))
        after = self.text[end : min(sentence.end, end + REACH)]
        return bool(
            _AFTER_DENIAL.match(after)
            or (count and _COUNT_DENIAL.match(after))
            or (quantity and _NOUN_DENIAL.match(after))
        )

    def asked(self, start: int) -> bool:
        sentence = self.sentence_at(start)
        return sentence.asked_from is not None and start >= sentence.asked_from

    def polarity(
        self,
        start: int,
        end: int,
        typed: bool,
        negated: bool | None = None,
        count: bool = False,
        quantity: bool = False,
    ) -> str:
        """How [start, end) is said; `typed` values also take a correction right after them
        (a `count`, a plain number, or another `quantity`, with its noun)."""
        if negated if negated is not None else self.parsed.negated(start):
            return DENIED
        if typed and self.denied_after(end, count, quantity):
            return DENIED
        if any(low <= start < high for low, high in self.taken_back):
            return DENIED
        if self.asked(start):
            return ASKED
        if self.hedged(start, end):
            return HEDGED
        return ASSERTED
