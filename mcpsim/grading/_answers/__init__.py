"""Grading the agent's final answer against the task's typed facts, in three layers.

Lexing reads typed values out of text and knows nothing of facts: `_text` (canonical text and its
words), `_numbers` (numbers in digits and in words), `_scanner` (money, dates, times, durations,
percentages, phone numbers, ids and numbers), `_names` (runs of capitalised words), `_places` (US
states, countries, street and unit words: `us`, `pycountry`), `_parsed` (an answer read once
into those mentions, with its sentences and which mentions are negated) and `_phrases` (words in
their inflections, phrases found word by word).

Reading turns the mentions into claims, still knowing nothing of facts: `_subjects` (the words a
value's clause binds it to), `_polarity` (asserted, denied, hedged or asked) and `_claims` (an
answer's claims together: ellipsis, alternatives, replacements, sums).

Judging decides what an answer states about the task's facts: `_alternatives` (the ways a fact can
be stated, and which mentions state it), `_reference` (what each fact is about, from the task's
own words), `_rivals` (other values offered for the same thing, swapped subjects), `_judging` (the
rules: polarity, rivals, stuffing, dumps and forbidden facts; the verdict on an answer) and
`_baselines` (the cheating baselines' answers). The judging imports the lexing and the reading,
never the reverse.
"""

from mcpsim.grading._answers._alternatives import alternatives
from mcpsim.grading._answers._baselines import (
    CLAIM_BASELINES,
    claim_baseline,
    denied_after,
    negate,
    spread_guesses,
    stuffed_answer,
    swapped_answer,
)
from mcpsim.grading._answers._claims import Claim, Claims, claims_of, read_claims
from mcpsim.grading._answers._judging import fact_stated, grade_answer
from mcpsim.grading._answers._parsed import Parsed, parse
from mcpsim.grading._answers._phrases import inflection_engine, word_forms
from mcpsim.grading._answers._text import canonical
from mcpsim.tasks import canonical_places, place_code

__all__ = [
    "CLAIM_BASELINES",
    "Claim",
    "Claims",
    "Parsed",
    "alternatives",
    "canonical",
    "canonical_places",
    "claim_baseline",
    "denied_after",
    "claims_of",
    "fact_stated",
    "grade_answer",
    "inflection_engine",
    "negate",
    "parse",
    "place_code",
    "read_claims",
    "spread_guesses",
    "stuffed_answer",
    "swapped_answer",
    "word_forms",
]
