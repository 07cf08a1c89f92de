"""What each of a task's facts is about: its subject, for binding the answer's claims to it.

Facts carry no subject of their own (a count's noun aside, which `_rivals` reads): a fact's
subject is the one its value has in the task's reference text, the answer check's requirement and
what the user wants, read as claims like an answer ("The agent said the refund is $39.98" gives
`refund`; "$364 for illness and $164 for a change of plans" gives `illness` and `change, plans`).
The requirement comes first: what the user wants often tells a story around the values, and a
fact takes its subject from it only when the requirement gives none. A fact whose value the
reference does not state, or states with no subject, has none: its claims are then bound by the
answer alone.

Each fact keeps its distinctive words: those that neither another fact of its kind nor another
value of its kind in the same text has (`$2,000 is above the standard card's $500 maximum`: the
$500's own words are `maximum`). A claim whose words are all the fact's, with one distinctive
word among them, is about that fact (`FactSubject.claims_it`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcpsim.grading._answers._alternatives import Alternative, alternatives
from mcpsim.grading._answers._claims import read_claims
from mcpsim.grading._answers._polarity import DENIED
from mcpsim.grading._answers._subjects import NO_SUBJECT, Subject, words_within
from mcpsim.tasks import Fact

REFERENCE_LIMIT = 4096  # characters of reference text read: a requirement and a wish, not a document


@dataclass(frozen=True)
class FactSubject:
    """A fact's subject (`words`), the part of it no other fact of its kind shares
    (`distinctive`), and the kinds its values are stated as."""

    subject: Subject
    distinctive: tuple[frozenset[str], ...]
    kinds: frozenset[str]

    def claims_it(self, subject: Subject, also: Sequence[frozenset[str]] = ()) -> bool:
        """Whether a claim with `subject` is about this fact: all its words are the fact's
        (or in `also`: the words the answer itself says of the fact), one of them distinctive."""
        if not subject.words or not self.distinctive:
            return False
        if not words_within(subject, (*self.subject.words, *also)):
            return False
        return self.names(subject.words)

    def names(self, words: Sequence[frozenset[str]]) -> bool:
        """Whether one of `words` is a distinctive word of this fact's subject."""
        return any(any(w & d for d in self.distinctive) for w in words)


def _merged(keys: Sequence[frozenset[str]]) -> tuple[frozenset[str], ...]:
    merged: list[frozenset[str]] = []
    for key in keys:
        if not any(key & k for k in merged):
            merged.append(key)
    return tuple(merged)


def _subject_in(reference: str, alts: Sequence[Alternative]) -> tuple[Subject, tuple[frozenset[str], ...]]:
    """The subject the text gives the fact's value, and the words it gives other values of that
    kind (`$2,000 is above the standard card's $500 maximum`: `above`, `card` are not the
    $500's own)."""
    claims = read_claims(reference[:REFERENCE_LIMIT])
    kinds = {alt.kind for alt in alts}
    marks: set[str] = set()
    own: list[frozenset[str]] = []
    foreign: list[frozenset[str]] = []
    for claim in claims.claims:
        if claim.polarity == DENIED or claim.kind not in kinds:
            continue
        if any(alt.accepts(claim.mention) for alt in alts):
            own += claim.subject.words
            marks |= claim.subject.marks
        else:
            foreign += claim.subject.words
    return Subject(_merged(own), frozenset(marks)), _merged(foreign)


def fact_subjects(facts: Sequence[Fact], reference: str | Sequence[str] | None) -> list[FactSubject]:
    """Each fact's subject, in the order of `facts`. `reference` holds the task's texts in order
    of precedence (the requirement, then what the user wants): a fact takes its subject from the
    first that gives it one. Worked out once per task's facts and texts (every episode of a task
    grades against the same)."""
    texts = (reference,) if isinstance(reference, str) else tuple(reference or ())
    key = (tuple(repr(fact) for fact in facts), texts)
    found = _SUBJECTS.get(key)
    if found is None:
        if len(_SUBJECTS) >= SUBJECTS_CACHED:
            _SUBJECTS.clear()
        found = _SUBJECTS[key] = _fact_subjects(facts, texts)
    return found


SUBJECTS_CACHED = 4096  # tasks whose facts' subjects are kept
_SUBJECTS: dict[tuple[tuple[str, ...], tuple[str, ...]], list[FactSubject]] = {}


def _fact_subjects(facts: Sequence[Fact], texts: Sequence[str]) -> list[FactSubject]:
    found: list[tuple[Subject, tuple[frozenset[str], ...], frozenset[str]]] = []
    for fact in facts:
        alts = alternatives(fact)
        kinds = frozenset(alt.kind for alt in alts if alt.kind != "phrase")
        subject: Subject = NO_SUBJECT
        foreign: tuple[frozenset[str], ...] = ()
        if kinds and kinds != {"name"}:
            for text in texts:
                subject, foreign = _subject_in(text, alts) if text else (NO_SUBJECT, ())
                if not subject.empty:
                    break
        found.append((subject, foreign, kinds))
    result = []
    for i, (subject, foreign, kinds) in enumerate(found):
        others = [*foreign, *(w for j, (s, _, k) in enumerate(found) if j != i and k & kinds for w in s.words)]
        distinctive = tuple(w for w in subject.words if not any(w & o for o in others))
        result.append(FactSubject(subject, distinctive, kinds))
    return result
