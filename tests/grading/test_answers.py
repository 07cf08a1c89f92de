"""Answer grading (mcpsim.grading._answers): typed facts, negation, hedged and stuffed values,
formats, inflections and forbidden facts, on hand-made facts and on the real tasks."""

from __future__ import annotations

import json
import os
from datetime import date
from functools import cache
from pathlib import Path

import pytest

from mcpsim.grading._answers import alternatives, fact_stated, grade_answer, negate, parse, stuffed_answer
from mcpsim.tasks import (
    AnyFact,
    CountFact,
    DateFact,
    DurationFact,
    IdFact,
    MoneyFact,
    NameFact,
    NumberFact,
    PhraseFact,
    Task,
    TimeFact,
    load_tasks,
)
from mcpsim.tasks._scenario import run_actions, task_episode
from mcpsim.world._registry import load_world
from tests.conftest import run_python

REPO = Path(__file__).resolve().parents[2]
WORLDS = ("retail", "airline", "workspace", "bank")


@cache
def tasks_of(world: str) -> list[Task]:
    return load_tasks(world).tasks


def task(world: str, task_id: str) -> Task:
    return next(t for t in tasks_of(world) if t.id == task_id)


def grade(t: Task, answer: str) -> tuple[bool, str]:
    return grade_answer(t.answer, t.forbidden, answer)


# -- typed mentions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Your refund is $39.98.",
        "You get 39.98 dollars back.",
        "Refunded: USD 39.98",
        "refund of US$39.98",
        "That is 39 dollars and 98 cents.",
        "It comes to 39.98 USD.",
        "a refund of $ 39.98 today",
    ],
)
def test_money_is_read_in_every_common_form(answer):
    assert fact_stated(MoneyFact(money=39.98), answer)


def test_thousands_separators_and_number_words_are_money_when_said_as_money():
    assert fact_stated(MoneyFact(money=1006), "The total was $1,006.")
    assert fact_stated(MoneyFact(money=1006), "The total was $1,006.00.")
    assert fact_stated(MoneyFact(money=40), "That is forty dollars.")
    assert fact_stated(MoneyFact(money=0.98), "Only 98 cents.")
    assert not fact_stated(MoneyFact(money=1006), "The total was $1,006.50.")


@pytest.mark.parametrize(
    "answer",
    [
        "It arrives May 25.",
        "It arrives on the 25th of May.",
        "Order #W25 is on its way.",
        "It lands at 25:00",
        "Reference GC-0025-0025",
        "It left at 10:25.",
        "25 minutes later",
        "25% off",
        "You have 25.",
    ],
)
def test_money_is_never_a_day_a_time_an_id_a_duration_or_a_bare_number(answer):
    # a plain number said of money (`The fee is 25.`) is money: tests/grading/test_claims.py
    assert not fact_stated(MoneyFact(money=25), answer)


@pytest.mark.parametrize(
    ("answer", "stated"),
    [
        ("You have three bags.", True),
        ("You have 3 bags.", True),
        ("3 checked bags are free", True),
        ("You have 3 suitcases.", False),
        ("Arriving March 3.", False),
        ("Departs at 3:00 pm.", False),
        ("It costs $3.", False),
        ("Order W3333333", False),
        ("It takes 3 days", False),
        ("3/4/2026", False),
    ],
)
def test_a_count_is_a_number_of_the_noun_and_part_of_nothing_else(answer, stated):
    assert fact_stated(CountFact(count=3, noun="bag"), answer) is stated


def test_a_plain_number_fact_never_matches_a_number_inside_a_date_time_or_id():
    fact = NumberFact(number=20)
    assert fact_stated(fact, "You were charged 20 and it is done.")
    assert fact_stated(fact, "The difference is $20.00.")  # legacy untyped: money too
    for answer in ("It arrives May 20.", "At 20:00 sharp.", "Order #W2020202.", "Delivered 2026-05-20."):
        assert not fact_stated(fact, answer), answer


@pytest.mark.parametrize(
    "answer",
    [
        "2026-05-25",
        "May 25",
        "May 25th",
        "May 25, 2026",
        "25 May 2026",
        "25th of May",
        "5/25/2026",
        "5/25",
        "Monday, May 25",
        "Mon May 25 2026",
        "on the 25th of May, 2026",
        "MAY 25",
        "2026-05-25T14:30:00Z",
        "2026/05/25",
        "2026.05.25",
        "25.05.2026",
        "25.5.2026",
    ],
)
def test_dates_match_in_any_common_format(answer):
    assert fact_stated(DateFact(date="2026-05-25"), f"It is due {answer}.")


def test_a_year_less_date_states_a_fact_only_when_its_year_is_optional():
    strict = DateFact(date="2026-05-25", year_optional=False)
    assert fact_stated(DateFact(date="2026-05-25"), "It is due May 25.")
    assert not fact_stated(strict, "It is due May 25.")
    assert fact_stated(strict, "It is due May 25, 2026.")
    assert not fact_stated(DateFact(date="2026-05-25"), "It was due May 25, 2025.")
    assert not fact_stated(DateFact(date="2026-05-25"), "It is due May 26.")
    assert fact_stated(DateFact(date="2027-05-13"), "Valid until 13/5/2027.")  # day first where it cannot be a month


def test_slashed_and_dotted_dates_are_read_by_their_convention_and_a_dotted_pair_is_a_number():
    may_6 = DateFact(date="2026-05-06")
    assert fact_stated(may_6, "Delivered 2026/05/06.")  # year first: month, then day
    assert fact_stated(may_6, "Delivered 06.05.2026.")  # dotted with the year last: day first
    assert not fact_stated(may_6, "Delivered 05.06.2026.")  # that is June 5
    assert fact_stated(DateFact(date="2026-05-25"), "Delivered 05.25.2026.")  # 25 cannot be a month
    assert not fact_stated(may_6, "Delivered 2026/06/05.")
    assert not fact_stated(may_6, "It costs $6.05 and weighs 6.05 kg.")  # no year: numbers, not dates
    assert [(m.kind, m.value) for m in parse("It shipped 2026.05.06").mentions] == [("date", (2026, 5, 6))]
    assert "date" not in [m.kind for m in parse("You owe 25.05 dollars").mentions]
    for text in ("Version 1.2.2026 is out", "build 2024.1.3 shipped", "v2026.05.06 is live", "sum 1000.10.12"):
        assert "date" not in [m.kind for m in parse(text).mentions], text  # version numbers, not dates
    assert not fact_stated(DateFact(date="2026-02-01"), "Upgrade to version 1.2.2026.")


def test_a_year_less_date_is_kept_year_less_rather_than_filled_in_from_today():
    (mention,) = parse("It is due May 25.").mentions
    assert (mention.kind, mention.value) == ("date", (None, 5, 25))


LIBFAKETIME = [
    Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
    Path("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"),
    Path("/usr/lib/faketime/libfaketime.so.1"),
]
PROBE = (
    "import json, sys; from datetime import date; from mcpsim.grading._answers import parse; "
    "print(json.dumps([date.today().isoformat(), [[m.kind, m.value] for t in sys.argv[1:] "
    "for m in parse(t).mentions]]))"
)
DATED = ["Due May 25.", "Due 25 May 2026, at 2:30 pm.", "5/25", "Monday, May 25", "in 3 hours"]


@pytest.mark.system
@pytest.mark.skipif(
    not any(p.exists() for p in LIBFAKETIME) and not os.environ.get("CI"),
    reason="libfaketime (Debian package faketime) is not installed; .ci/run installs it",
)
def test_parsing_a_date_gives_the_same_result_a_year_ahead_and_a_year_behind():
    lib = next(p for p in LIBFAKETIME if p.exists())
    here = json.loads(json.dumps([[m.kind, m.value] for t in DATED for m in parse(t).mentions]))
    for shift in ("+365d", "-365d"):
        env = {**os.environ, "LD_PRELOAD": str(lib), "FAKETIME": shift, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
        run = run_python("-c", PROBE, *DATED, env=env, cwd=REPO, timeout=300)
        today, there = json.loads(run.stdout)
        assert abs((date.fromisoformat(today) - date.today()).days) >= 360  # the clock really moved
        assert there == here


@pytest.mark.parametrize(
    ("fact", "answer", "stated"),
    [
        # times and durations match in any notation and unit
        (TimeFact(time="14:30"), "at 2:30 PM", True),
        (TimeFact(time="14:30"), "at 2:30pm", True),
        (TimeFact(time="14:30"), "at 14:30", True),
        (TimeFact(time="14:30"), "at 2.30 p.m.", True),
        (TimeFact(time="14:30"), "at 2:30 am", False),
        (TimeFact(time="00:45"), "at 12:45 a.m.", True),
        (TimeFact(time="12:00"), "at noon", True),
        (TimeFact(time="16:00"), "at 4pm", True),
        (DurationFact(duration=180), "180 minutes", True),
        (DurationFact(duration=180), "3 hours", True),
        (DurationFact(duration=180), "a 180-minute delay", True),
        (DurationFact(duration=180), "three hours", True),
        (DurationFact(duration=3, unit="hours"), "a three-hour delay", True),
        (DurationFact(duration=295), "4 hours and 55 minutes", True),
        (DurationFact(duration=4, unit="hours"), "4 hours and 55 minutes", False),
        (DurationFact(duration=30, unit="days"), "a 30-day window", True),
        (DurationFact(duration=30, unit="days"), "one month", False),
        (DurationFact(duration=180), "at 3:00", False),
        (DurationFact(duration=180), "$180", False),
        # ids are exact tokens; names ignore case and accents
        (IdFact(id="W6964978"), "Order #w6964978 is cancelled.", True),
        (IdFact(id="#W6964978"), "Order W6964978 is cancelled.", True),
        (IdFact(id="W6964978"), "Order W69649781 is cancelled.", False),
        (IdFact(id="W6964978"), "Order W696497 is cancelled.", False),
        (IdFact(id="4186"), "your Visa ending in 4186", True),
        (IdFact(id="4186"), "a total of $4,186", False),
        (IdFact(id="4186"), "card 41860", False),
        (NameFact(name="José Núñez"), "Booked for jose nunez.", True),
        (NameFact(name="Dana"), "Danae can comment.", False),
        (NameFact(name="Dana"), "Dana's access is comment-only.", True),
        # phrases accept inflections, synonyms, case, accents and hyphens
        ("refund", "Both refunds are issued.", True),
        ("refund", "I refunded it.", True),
        ("refunded", "Your refund is on its way.", True),
        ("cancel", "It was cancelled.", True),
        ("cancel", "It was canceled.", True),
        ("shipped", "It ships today.", True),
        ("shipped", "It is unshipped.", False),
        ("busy", "She is in business class.", False),
        ("pay", "You paid already.", True),
        ("verify", "I could not get you verified.", True),
        ("box", "two boxes", True),
        ("child", "two children", True),
        ("in transit", "It is in-transit.", True),
        ("in transit", "status: in_transit", True),
        ("180 minute", "a 180-minute delay", True),
        ("return window", "the return windows", True),
        (PhraseFact(phrase="pending", synonyms=["on its way"]), "The money is on its way.", True),
        (PhraseFact(phrase="pending", synonyms=["on its way"]), "The money is on hold.", False),
        (AnyFact(any=["out of stock", "sold out"]), "The red one is SOLD OUT.", True),
        ("café", "the CAFE on the corner", True),
    ],
)
def test_a_fact_is_stated_in_any_of_its_forms_and_only_then(fact, answer, stated):
    assert fact_stated(fact, answer) is stated


def test_a_phrase_that_is_one_typed_value_matches_that_value_in_any_format():
    assert fact_stated("May 20", "It should arrive on 2026-05-20.")
    assert fact_stated(AnyFact(any=["30 days"]), "You have a thirty-day window.")
    assert not fact_stated("May 20", "It costs $20 and arrives in May.")


# -- negation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "answer"),
    [
        (MoneyFact(money=39.98), "It is NOT $39.98."),
        (MoneyFact(money=39.98), "The refund isn't $39.98."),
        (MoneyFact(money=39.98), "You will get $40, not $39.98."),
        (MoneyFact(money=39.98), "You get $40 instead of $39.98."),
        ("pending", "The order is no longer pending."),
        ("pending", "It isn't pending."),
        ("shipped", "It wasn't shipped."),
        ("shipped", "It has never shipped."),
        ("refunded", "It won't be refunded."),
        ("cancelled", "It cannot be cancelled."),
        ("cancelled", "It can't be cancelled."),
        (MoneyFact(money=25), "There is no $25 fee."),
        (DateFact(date="2026-05-25"), "It is not due on May 25."),
        (NameFact(name="Visa"), "It was not your Visa."),
        (IdFact(id="W6964978"), "It is not order W6964978."),
    ],
)
def test_a_fact_stated_under_negation_does_not_count(fact, answer):
    assert not fact_stated(fact, answer)
    ok, reason = grade_answer([fact], [], answer)
    assert not ok and "stated only under negation" in reason


@pytest.mark.parametrize(
    ("fact", "answer"),
    [
        (MoneyFact(money=39.98), "I did not charge a fee; your refund is $39.98."),
        (MoneyFact(money=39.98), "I didn't charge a fee, and your refund is $39.98."),
        (MoneyFact(money=39.98), "No fee applies. Your refund is $39.98."),
        (MoneyFact(money=223.98), "You haven't received the $223.98 refund yet."),
        ("shipped", "I can't cancel the order because it has already shipped."),
        ("shipped", "Unfortunately it cannot be cancelled: it shipped yesterday."),
        ("not eligible", "You are not eligible for compensation."),
        ("cancelled", "The order that was not paid is cancelled."),
    ],
)
def test_negation_stays_with_what_it_qualifies(fact, answer):
    assert fact_stated(fact, answer)


# -- conflicting values -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Your refund is $39.98 or $40.",
        "Your refund is either $40 or $39.98.",
        "It is $39.98/$41.00.",
        "It's maybe $39.98, maybe $12.",
        "Refund: $39.98, $12.00, $7.50.",
        "Refund: $39.98? $41?",
    ],
)
def test_hedged_or_listed_values_of_the_fact_s_type_are_a_conflict(answer):
    ok, reason = grade_answer([MoneyFact(money=39.98)], [], answer)
    assert not ok and "conflicting: $39.98 (hedged with" in reason


def test_values_of_other_types_or_other_asked_facts_are_no_conflict():
    facts = [MoneyFact(money=364), MoneyFact(money=164)]
    assert grade_answer(facts, [], "You'd get $364 back for a health reason, or $164 otherwise.")[0]
    assert grade_answer([MoneyFact(money=39.98)], [], "Refund $39.98 to your Visa or PayPal, by May 25 or 26.")[0]
    assert grade_answer([MoneyFact(money=39.98)], [], "Refund $39.98, not $12 or $40.")[0]  # the others negated
    assert grade_answer([MoneyFact(money=39.98)], [], "Your refund is $39.98. $6.00 of the total was the fee.")[0]
    assert grade_answer(
        [MoneyFact(money=39.98)], [], "Your $39.98 goes back to your Visa or PayPal card, and the $5 fee is waived."
    )[0]  # `or` joins the cards, not the amounts


def test_an_answer_stuffed_with_amounts_fails_but_one_or_two_extra_amounts_pass():
    fact = [MoneyFact(money=39.98)]
    assert grade_answer(fact, [], "Your order total was $45.98; after the $6.00 fee you get $39.98 back.")[0]
    stuffed = (
        "Amounts in your account: $12.00 in March; $39.98 refunded; $45.00 pending; $7.25 fee; $18.40 in "
        "April; $3.10 interest."
    )
    ok, reason = grade_answer(fact, [], stuffed)
    assert not ok and "5 other amounts of money (at most 4 are allowed)" in reason


def test_an_answer_listing_many_unrelated_values_or_raw_json_is_not_a_reply():
    fact = [MoneyFact(money=39.98)]
    many = (
        "Refund $39.98 for W1000001, W1000002, W1000003, W1000004 dated May 1, May 2 at 1:00 pm and "
        "2:00 pm with 3, 4, 5, 6 items and 10 minutes."
    )
    ok, reason = grade_answer(fact, [], many)
    assert not ok and "values that answer nothing asked" in reason
    raw = '{"order_id": "W1", "status": "cancelled", "refund": {"amount": 39.98, "method": "visa"}}'
    ok, reason = grade_answer(fact, [], raw)
    assert not ok and "raw data" in reason


@pytest.mark.parametrize("world", WORLDS)
def test_the_policy_text_pasted_as_the_answer_states_no_task_s_facts(world):
    policy = load_world(world).policy
    for t in tasks_of(world):
        if t.answer:
            ok, reason = grade(t, policy)
            assert not ok and "not a reply" in reason, t.id


# -- forbidden facts and the reason -----------------------------------------------------------------


def test_a_forbidden_fact_fails_the_answer_and_is_named_unless_negated():
    facts, forbidden = [CountFact(count=3, noun="bag")], [PhraseFact(phrase="on time")]
    assert grade_answer(facts, forbidden, "You get 3 bags free; the flight is not on time.")[0]
    ok, reason = grade_answer(facts, forbidden, "You get 3 bags free and the flight is on time.")
    assert not ok and reason == "states what is not so: on time"


def test_a_forbidden_fact_in_a_negated_clause_is_not_asserted():
    t = task("airline", "lookup-delayed-flight-new-time")  # forbidden: on time
    assert grade(t, "It won't leave on time: it is delayed 295 minutes and now leaves at 00:45.")[0]
    ok, reason = grade(t, "It is delayed 295 minutes, now leaving at 00:45, and will land on time.")
    assert not ok and "states what is not so: on time" in reason


def test_names_in_a_comma_list_are_no_conflict_but_names_offered_as_alternatives_are():
    fact = [NameFact(name="Sofia")]
    assert grade_answer(fact, [], "Hi Maya, Sofia owns the deck, Dana and Ravi can only view it.")[0]
    ok, reason = grade_answer(fact, [], "It is owned by Sofia or maybe Dana.")
    assert not ok and "hedged with 'Dana'" in reason


def test_the_reason_names_each_missing_negated_conflicting_and_forbidden_fact():
    facts = [MoneyFact(money=10), MoneyFact(money=20), MoneyFact(money=30), IdFact(id="W1234567")]
    ok, reason = grade_answer(facts, [MoneyFact(money=50)], "It is not $20; it is $30 or $31; also $50.")
    assert not ok
    assert reason == (
        "missing: $10.00, W1234567; stated only under negation: $20.00; "
        "conflicting: $30.00 (hedged with '$31'); states what is not so: $50.00"
    )
    assert grade_answer(facts[:1], [], "Refund: $10.") == (True, "all 1 facts stated")
    assert grade_answer(facts, [], None) == (False, "no final answer was given")


# -- real tasks -------------------------------------------------------------------------------------

NATURAL = [  # what a correct agent might say, in its own words
    (
        "retail",
        "cancel-pending-order",
        (
            "Hi Christine, I've cancelled order #W0006911. Since it hadn't shipped, "
            "the full $39.98 goes back to your original payment method within 5-7 business days."
        ),
    ),
    (
        "retail",
        "exchange-pay-difference",
        (
            "Done! I exchanged your tan Classic Leather Sneakers in order "
            "#W0878702 from a size 6 to a size 8. The 8 costs $54.99 versus $49.99, so I charged the $5.00 difference "
            "to your Mastercard."
        ),
    ),
    (
        "retail",
        "refund-status-after-return",
        (
            "Hi Douglas, your refund of $223.98 for order #W4400783 was issued "
            "to your PayPal account, but you haven't received the $223.98 yet: it's still pending."
        ),
    ),
    (
        "retail",
        "track-shipped-order",
        (
            "Your order #W4682000 is in transit. The tracking number is "
            "7029190570717, and it should arrive on Wednesday, 5/20/2026."
        ),
    ),
    ("retail", "which-card-paid", ("You paid for order #W3776322 with your VISA ending in 4186; $599.96 was charged.")),
    (
        "retail",
        "refuse-cancel-shipped-order",
        (
            "I'm sorry, Richard, but I can't cancel order #W2703806 because "
            "it has already shipped (tracking number 7719343161827). Once it arrives you can return it."
        ),
    ),
    ("retail", "open-orders-total", "Five of your orders haven't shipped yet; together they cost $1,736.83."),
    ("airline", "lookup-next-trip", "Your next flight is MRD1356 on May 25th, reservation code 2cvbg9."),
    (
        "airline",
        "lookup-delayed-flight-new-time",
        ("No, it isn't on time: MRD265 is delayed by 4 hours and 55 minutes and is now expected to leave at 12:45 am."),
    ),
    (
        "airline",
        "workflow-cancel-flex-and-rebook-with-returned-certificate",
        (
            "I cancelled reservation A43XE4: "
            "$1,069 went back to your Amex ending 0672 and a $200 travel certificate was issued. I booked MRD2380 on "
            "June 2 and MRD585 on June 6 for the three of you in economy flex (reservation MC45CB). The new trip costs "
            "$834; the $200 certificate covers part of it and the remaining $634 went on your Amex."
        ),
    ),
    (
        "airline",
        "lookup-usable-certificates",
        (
            "You can still use two certificates: one worth $250 that "
            "expires on September 30, and one worth $50 valid until 13 May 2027. The $200 one expired in March."
        ),
    ),
    (
        "airline",
        "refuse-compensation-short-delay",
        (
            "I'm sorry, but compensation for a delay needs a delay of "
            "at least three hours, so I can't issue a certificate for MRD2527."
        ),
    ),
    (
        "airline",
        "lookup-baggage-allowance",
        (
            "You can check three bags for free on reservation 29YXMN. Two "
            "more would cost $50 each, so $100 in total. I haven't added anything."
        ),
    ),
    ("workspace", "lookup-panel-time-both-zones", "The panel is at 10:00 your time, which is 2:30 PM for Ravi."),
    (
        "workspace",
        "lookup-budget-sheet-access",
        ("Dana can comment on it; Ravi, Lukas and Hana have view-only access. I haven't changed anything."),
    ),
    (
        "workspace",
        "lookup-acme-renewal-terms",
        ("Acme want the renewal signed by Friday 29 May; the main change is a 4 percent price increase."),
    ),
    (
        "bank",
        "replace-stolen-card-expedited",
        (
            "I've blocked the stolen card and ordered an expedited replacement; "
            "the $25.00 rush fee was charged. Your new card ends in 4262."
        ),
    ),
    (
        "bank",
        "dispute-undelivered-order",
        (
            "I've opened a dispute for the $41 charge from Nordstrom on April 30. "
            "While we investigate you'll get a provisional credit of $41.00."
        ),
    ),
    (
        "bank",
        "refuse-dispute-of-a-transfer",
        (
            "I'm sorry, Karen: a dispute can only be opened on a card "
            "transaction, and the $90.00 to William Reynolds was a transfer you sent."
        ),
    ),  # singular of `card transactions`
]


@pytest.mark.parametrize(("world", "task_id", "answer"), NATURAL, ids=[t for _, t, _ in NATURAL])
def test_correct_answers_in_other_words_pass_real_tasks(world, task_id, answer):
    ok, reason = grade(task(world, task_id), answer)
    assert ok, reason


FAKES = [  # cheap wrong answers, each against the rule it tests
    ("bank", "replace-stolen-card-expedited", "Your new card ends in 4262 and arrives May 25.", "missing: $25.00"),
    ("bank", "replace-stolen-card-expedited", "Your new card ends in 4262; the fee is not $25.", "negation"),
    ("bank", "replace-stolen-card-expedited", "Your card ends in 4262; the fee is $25 or $35.", "hedged"),
    ("retail", "cancel-pending-order", "Cancelled. Your refund is not $39.98.", "negation"),
    ("retail", "cancel-pending-order", "Cancelled; you get $39.98, $45.98, $12.00, $5.00 or $6.00 back.", "hedged"),
    (
        "retail",
        "cancel-pending-order",
        ("Cancelled, and your refund is $39.98. Your other orders came to $12.00, $45.98, $18.40, $3.10 and $7.50."),
        "the answer states 5 other amounts of money",
    ),
    ("retail", "open-orders-total", "You have 5 orders open, totalling $1,736.83 or $1,863.70.", "hedged"),
    ("retail", "open-orders-total", "Orders: 5, 6, 7; total $1,736.83.", "hedged with '6'"),
    (
        "airline",
        "lookup-baggage-allowance",
        "You can check 3 bags free; extra ones cost $150.",
        "states what is not so: $150.00",
    ),
    ("airline", "lookup-delayed-flight-new-time", "Delayed 295 minutes, leaving at 00:45 or 01:45.", "hedged"),
    ("airline", "lookup-next-trip", "Your next flight is MRD1356, reservation 2CVBG9, on May 26.", "missing"),
    ("workspace", "lookup-panel-time-both-zones", "It is at 10:00 for you; for Ravi it's not 14:30.", "negation"),
]


@pytest.mark.parametrize(("world", "task_id", "answer", "why"), FAKES, ids=[f"{t}:{w}" for _, t, _, w in FAKES])
def test_cheap_wrong_answers_fail_real_tasks(world, task_id, answer, why):
    ok, reason = grade(task(world, task_id), answer)
    assert not ok
    assert {"negation": "stated only under negation", "hedged": "conflicting: "}.get(why, why) in reason


@pytest.mark.parametrize("world", WORLDS)
def test_every_real_task_passes_its_oracle_answer_and_fails_its_negation(world):
    for t in tasks_of(world):
        if not t.answer:
            continue
        assert grade(t, t.oracle_answer())[0], (t.id, grade(t, t.oracle_answer()))
        negated = " ".join(negate(f) for f in t.answer)
        assert not grade(t, negated)[0], (t.id, negated)
        for fact in t.answer:
            assert not fact_stated(fact, negate(fact)), (t.id, fact)


STUFFED_TASKS = [
    ("retail", "redeem-gift-card"),
    ("retail", "cancel-pending-order"),
    ("retail", "which-card-paid"),
    ("workspace", "lookup-panel-time-both-zones"),
    ("workspace", "lookup-acme-renewal-terms"),
]


@pytest.mark.parametrize(("world", "task_id"), STUFFED_TASKS, ids=[t for _, t in STUFFED_TASKS])
def test_every_value_seen_in_the_tool_results_stuffed_into_the_answer_fails_real_tasks(world, task_id, templates):
    t = task(world, task_id)
    episode = task_episode(load_world(world), t, templates=templates)
    try:
        run_actions(episode, t.gold)
        texts = [json.dumps(c.result, default=str) for c in episode.transcript() if c.result is not None]
    finally:
        episode.close()
    stuffed = stuffed_answer(texts)
    mentions = parse(stuffed).mentions
    assert any(alt.accepts(m) for f in t.answer for alt in alternatives(f) for m in mentions)  # asked values in it
    assert not grade(t, stuffed)[0], stuffed  # but the answer fails
    assert not grade(t, "\n".join(texts))[0]  # and so do the pasted results


def test_stuffed_answer_lists_each_value_of_the_texts_once():
    answer = stuffed_answer(
        [
            '{"total": 39.98, "order_id": "W6964978", "placed": "2026-05-01", "name": "Carl Ross"}',
            "Carl Ross paid $39.98 at 2:30 pm",
        ]
    )
    for item in ("W6964978", "$39.98", "39.98", "2026-05-01", "Carl Ross", "2:30 pm"):
        assert item in answer
    assert answer.count("W6964978") == 1
    assert negate(MoneyFact(money=39.98)) == "It is not $39.98."


@pytest.mark.parametrize(
    ("amount", "answer"),
    [
        (740, "You get $740: the $790 fare minus the $100 fee, plus the $50 bag fee."),
        (499, "Your trip costs $499: $300 from the gift card and $199 on your Mastercard."),
        (200, "Your voucher is worth $200 ($100 per passenger)."),
        (100, "You get $100: $50 for each of you."),
        (
            1400,
            "You'd already used $1,100 of your $2,500 limit, so I sent $1,400 today; the remaining $700 can go "
            "tomorrow.",
        ),
    ],
)
def test_an_amount_explained_by_its_breakdown_is_stated_not_hedged(amount, answer):
    """Correct answers from the airline and bank policies break an amount down after a colon or in
    brackets; that is an explanation, not a list of candidate values."""
    passed, reason = grade_answer([MoneyFact(money=amount)], [], answer)
    assert passed, reason


@pytest.mark.parametrize(
    "answer",
    ["$39.98, $12.00, $7.50", "It is $39.98 or $40.", "$39.98? $40?", "Refund $39.98 $40.00 $12.00 $7.50 $99.99 $1.00"],
)
def test_candidate_lists_still_conflict(answer):
    assert not grade_answer([MoneyFact(money=39.98)], [], answer)[0]
