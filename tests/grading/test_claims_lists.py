"""Three classes of answer reading found by the solution audit (`tests/grading/solution_audit.py`),
each shown both ways on the real tasks where the audit met it:

- A value inside a longer match that is dropped (its span overlaps a value already read) was lost
  with it: in `USD 90.00\\n- 24 hours` the durations' pattern read `90.00 - 24 hours` as a range,
  found `90.00` taken by the money and skipped on past `24 hours`. The scanner now searches on from
  just after a dropped match's start, and a range of durations does not run over a line break.
- A colon, dash or bracket before every value of a list (`Here's what I found: $2,189.31,
  $1,005.00, $1,184.31`) was read as the explanation of a sum when one value happened to add up
  the others, and the others, with no subject, stated nothing. Such a sign counts now only between
  the sum's first value and its last (`$40: $10 + $30`, `$40 (the $10 fee and the $30 fare)`).
- A value stated, then said again and denied (`Your refund is $40. That $40 is wrong.`) was stated
  by its first mention. A denial of the same value said again about nothing else takes it back.

Cheap forms of each (a denial after the value, guesses spread over sentences or list items,
competing values for the same subject, a value bound to another subject) still fail."""

from __future__ import annotations

from functools import cache

import pytest

from mcpsim.grading._answers import grade_answer, parse
from mcpsim.tasks import DurationFact, MoneyFact, Task, load_tasks
from tests.grading.claims_redteam import references

INSURE = ("airline", "hard-insure-every-eligible-trip-and-todays-delay")  # $90, 24 hours
BAGS = ("airline", "hard-delay-claims-cancel-and-bag")  # $180 to the card, $200 certificate, 24 hours
PAYDAY = ("bank", "hard-payday-split-if-paycheck-landed")  # $2,189.31 a quarter, $1,005.00 today, $1,184.31 left


@cache
def task(world: str, task_id: str) -> Task:
    return next(t for t in load_tasks(world).tasks if t.id == task_id)


def grade(which: tuple[str, str], answer: str) -> tuple[bool, str]:
    t = task(*which)
    return grade_answer(t.answer, t.forbidden, answer, reference=references(t))


def kinds(text: str) -> list[tuple[str, str]]:
    parsed = parse(text)
    return [(m.kind, text[m.start : m.end]) for m in parsed.mentions if m.kind != "name"]


# -- a value inside a dropped match --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- USD 90.00\n- 24 hours", [("money", "USD 90.00"), ("duration", "24 hours")]),
        ("Insured for USD 90.00 - 24 hours is the limit.", [("money", "USD 90.00"), ("duration", "24 hours")]),
        ("Check-in opens June 3 - 24 hours before departure.", [("date", "June 3"), ("duration", "24 hours")]),
        ("Refund: 90\n- 24 hours", [("number", "90"), ("duration", "24 hours")]),  # no `90-24 hours` range
    ],
)
def test_a_value_after_one_already_read_is_not_lost_with_a_longer_match(text, expected):
    assert sorted(kinds(text), key=lambda k: text.index(k[1])) == expected


def test_a_range_of_durations_on_one_line_is_still_two():
    assert [k for k, _ in kinds("Refunds take 5-7 business days.")] == ["duration", "duration"]
    assert [k for k, _ in kinds("It takes 5 to 7 days.")] == ["duration", "duration"]


@pytest.mark.parametrize(
    ("which", "answer"),
    [
        (INSURE, "I've added the travel insurance as you asked.\nHere are the details:\n- USD 90.00\n- 24 hours"),
        (INSURE, "Done:\n- Insurance for both trips: USD 90.00\n- 24 hours: how long after booking it can be added"),
        (INSURE, "Both trips are insured for USD 90.00 - 24 hours after booking is the cut-off for the others."),
        (BAGS, "Done:\n- USD 180.00 back to your Mastercard\n- USD 200.00 as a new travel certificate\n- 24 hours"),
        (BAGS, "- Refund: USD 180.00 to your card\n- Certificate: USD 200.00\n- 24 hours: the insurance window"),
    ],
)
def test_list_items_after_an_amount_state_their_values(which, answer):
    ok, reason = grade(which, answer)
    assert ok, reason


@pytest.mark.parametrize(
    ("which", "answer", "why"),
    [
        (INSURE, "- USD 90.00\n- 24 hours, but that is incorrect", "negation"),  # a denial after the value
        (INSURE, "- USD 90.00\n- 24 hours\n- 48 hours", "conflicting"),  # guesses over list items
        (INSURE, "- USD 90.00\n- 24 hours?\n- Or 48 hours?", "conflicting"),
        (INSURE, "- USD 90.00\n- USD 95.00\n- 24 hours", "conflicting"),  # competing values
        (INSURE, "- Insurance: USD 90.00\n- Insurance window: 24 hours\n- Insurance window: 48 hours", "conflicting"),
        (  # a value bound to another subject: the amounts swapped between the card and the certificate
            BAGS,
            "- USD 200.00 back to your Mastercard\n- USD 180.00 as a new travel certificate\n- 24 hours",
            "another fact's subject",
        ),
    ],
)
def test_cheap_list_answers_still_fail(which, answer, why):
    ok, reason = grade(which, answer)
    assert not ok and why in reason, reason


# -- a sign before every value of a list ---------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Thanks for waiting. Here's what I found: 2,189.31 dollars, 1,005.00 dollars, 1,184.31 dollars.",
        "Here's the summary - $2,189.31, $1,005.00, $1,184.31.",
        "In short: $2,189.31, $1,005.00 and $1,184.31.",
        "Your paycheck landed (rent and daycare are paid): $2,189.31, $1,005.00 and $1,184.31.",
        "A quarter of the paycheck is $2,189.31: $1,005.00 moved to savings today and $1,184.31 is left for tomorrow.",
    ],
)
def test_a_list_introduced_by_a_colon_or_a_dash_states_each_value(answer):
    ok, reason = grade(PAYDAY, answer)
    assert ok, reason


def test_a_word_of_sums_still_makes_a_sum_when_a_bracket_comes_before_every_value():
    earbuds = ("retail", "hard-three-line-exchange-tent-too-late-cancel-earbuds")  # $172.98 back, net
    answer = (
        "All done. The earbuds order is cancelled ($175.98 back) and the exchange cost $3.00, so $172.98 "
        "comes back to your Mastercard, net. The tent is past the 30-day return window, so it stays with you."
    )
    ok, reason = grade(earbuds, answer)
    assert ok, reason
    ok, reason = grade(earbuds, answer.replace(", net.", ". Or $175.98."))  # the other amount as a guess
    assert not ok and "conflicting" in reason, reason


def test_a_sign_between_the_values_still_makes_a_sum_whose_bare_parts_state_nothing():
    ok, reason = grade(PAYDAY, "Here's what I found: $1,005.00 + $1,184.31 = $2,189.31.")
    assert not ok and "unlabelled part of a sum" in reason, reason
    ok, reason = grade_answer([MoneyFact(money=10)], [], "Your refund: $10 + $30 = $40")
    assert ok, reason  # the first part has the subject: `refund`
    ok, reason = grade_answer([MoneyFact(money=30)], [], "Your refund: $10 + $30 = $40")
    assert not ok and "unlabelled part of a sum" in reason, reason


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Here's what I found: $2,189.31, $1,005.00, $1,184.31 - but the last figure is wrong.", "negation"),
        ("Here's what I found: $2,189.31, $1,005.00, $1,184.31. The $1,184.31 is incorrect.", "negation"),
        ("Here's what I found: $2,189.31, $1,005.00 or $1,100.00, $1,184.31.", "conflicting"),
        ("Here's what I found: $2,189.31. $1,005.00? $1,100.00? $1,184.31.", "conflicting"),
        ("Here's what I found: $2,189.31, $1,005.00, $1,184.31, $1,200.00.", "conflicting"),
        (
            "Here's what I found: a quarter of the paycheck is $1,005.00, $2,189.31 went to savings today, "
            "and $1,184.31 is left for tomorrow.",
            "another fact's subject",
        ),
    ],
)
def test_cheap_list_answers_of_a_sum_still_fail(answer, why):
    ok, reason = grade(PAYDAY, answer)
    assert not ok and why in reason, reason


# -- a value said again and denied ---------------------------------------------------------------------

REFUND = "The agent said the refund is $40."


@pytest.mark.parametrize(
    "answer",
    [
        "Your refund is $40. The $40 is incorrect.",
        "Your refund is $40. That $40 figure is wrong.",
        "$40. $40 is wrong.",
        "The refund is $40. Not $40, sorry.",
    ],
)
def test_a_value_denied_where_it_is_said_again_is_taken_back(answer):
    ok, reason = grade_answer([MoneyFact(money=40)], [], answer, reference=REFUND)
    assert not ok and "negation" in reason, reason


@pytest.mark.parametrize(
    "answer",
    [
        "Your refund is $40. There is no $40 fee.",
        "Your refund is $40, and no $40 restocking fee applies.",
        "Your refund is $40, not $45.",
        "The refund is not $45; it is $40.",
        "You were worried it wouldn't be $40, but your refund is $40.",  # the denial comes first
    ],
)
def test_a_denial_of_the_same_value_of_another_subject_or_of_another_value_takes_nothing_back(answer):
    ok, reason = grade_answer([MoneyFact(money=40)], [], answer, reference=REFUND)
    assert ok, reason


def test_a_duration_said_again_and_denied_is_taken_back_too():
    reference = "The agent said insurance can be added within 24 hours of booking."
    fact = DurationFact(duration=24, unit="hours")
    assert grade_answer([fact], [], "Insurance can be added within 24 hours of booking.", reference=reference)[0]
    ok, reason = grade_answer(
        [fact], [], "Insurance can be added within 24 hours of booking. The 24 hours is wrong.", reference=reference
    )
    assert not ok and "negation" in reason, reason


@pytest.mark.parametrize(
    "answer",
    [
        "I could not do that for CL0042117: Claim CL0042117 does not have enough cover left.",
        "I could not pay CL0042117. The world says CL0042117 is not approved yet.",
    ],
)
def test_a_negated_clause_about_a_record_said_again_does_not_take_back_its_id(answer):
    """An id names the record a clause is about: relaying the world's refusal ("Claim CL1 does not
    have enough cover") says something of CL1, it does not deny that the record is CL1."""
    from mcpsim.tasks import IdFact

    reference = "The agent could not pay claim CL0042117."
    ok, reason = grade_answer([IdFact(id="CL0042117")], [], answer, reference=reference)
    assert ok, reason
