"""Grading the agent's final answer against the task's typed facts, in two layers.

Lexing reads typed values out of text and knows nothing of facts: `_text` (canonical text and its
words), `_numbers` (numbers in digits and in words), `_scanner` (money, dates, times, durations,
percentages, ids and numbers), `_names` (runs of capitalised words), `_parsed` (an answer read once
into those mentions, with its sentences and which mentions are negated) and `_phrases` (words in
their inflections, phrases found word by word).

Judging decides what an answer states about the task's facts: `_alternatives` (the ways a fact can
be stated), `_judging` (the four rules and forbidden facts; the verdict on an answer) and
`_baselines` (the cheating baselines' answers). The judging imports the lexing, never the reverse.
"""

from mcpsim.grading._answers._alternatives import alternatives
from mcpsim.grading._answers._baselines import negate, stuffed_answer
from mcpsim.grading._answers._judging import fact_stated, grade_answer
from mcpsim.grading._answers._parsed import Parsed, parse
from mcpsim.grading._answers._phrases import inflection_engine, word_forms
from mcpsim.grading._answers._text import canonical

__all__ = [
    "Parsed",
    "alternatives",
    "canonical",
    "fact_stated",
    "grade_answer",
    "inflection_engine",
    "negate",
    "parse",
    "stuffed_answer",
    "word_forms",
]
