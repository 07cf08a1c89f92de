"""The final answer read as claims (mcpsim.grading._answers: `_subjects`, `_polarity`, `_claims`,
`_reference`, `_rivals`): a fact counts only when asserted about its subject with no rival. Each
class of cheap answer fails on real tasks of every hand-built world and on generated tasks, and
natural correct answers pass; then the lexing that reads what people write (abbreviations, places,
phone numbers, amounts without a currency marker)."""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path

import pytest

from mcpsim.engine import Change
from mcpsim.grading._answers import (
    canonical_places,
    denied_after,
    grade_answer,
    parse,
    place_code,
    read_claims,
    spread_guesses,
    swapped_answer,
)
from mcpsim.grading._described import names_the_change
from mcpsim.specs import compile_spec, load_spec
from mcpsim.taskgen import generate_tasks
from mcpsim.taskgen._generator import TaskGenerator
from mcpsim.tasks import CountFact, DateFact, IdFact, MoneyFact, NameFact, Task, TimeFact, load_tasks
from tests.grading.claims_redteam import WORLDS, references

SPECS = Path(__file__).parents[2] / "examples" / "specs"


@cache
def task(world: str, task_id: str) -> Task:
    return next(t for t in load_tasks(world).tasks if t.id == task_id)


def grade(t: Task, answer: str) -> tuple[bool, str]:
    return grade_answer(t.answer, t.forbidden, answer, reference=references(t))


def polarity(text: str) -> list[tuple[object, str]]:
    return [(c.mention.value, c.polarity) for c in read_claims(text).claims if c.kind != "name"]


# -- polarity -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Your refund is $40, but that is incorrect.",
        "$40 is wrong.",
        "The refund is $40. That's not right.",
        "The $40 figure isn't correct.",
        "$40, which was a mistake.",
        "Refund: $40 (incorrect).",
        "Ignore the $40 I mentioned.",
        "The refund is $40 rather than $45, sorry, scratch that.",
        "It's not $40.",
        "You get $45 instead of $40.",
        "You get $45 rather than $40.",
        "The $40 refund is wrong.",
        "Your $40 late fee isn't correct - it was waived.",
        "The $40 refund was no longer valid; I refunded the order in full.",
    ],
)
def test_a_value_denied_or_taken_back_before_or_after_it_is_denied(text):
    assert (40.0, "denied") in polarity(text)


@pytest.mark.parametrize(
    "text",
    [
        "The $40 charge was a mistake by the merchant, so I opened a dispute.",  # the charge, not the amount
        "It's not right that you were charged twice; I refunded the $40.",
        "I did not charge a fee; your refund is $40.",
        "Your refund is $40. That's correct.",
        "2 items were wrong, so I refunded $40.",
        "The $40 charge was a mistake, so I refunded $40.",
        "Your $40 refund is correct.",
        "I refunded $40 and nothing else was wrong.",
    ],
)
def test_a_denial_of_something_else_leaves_the_value_asserted(text):
    assert (40.0, "asserted") in polarity(text)


def test_a_correction_takes_back_the_value_before_it_of_the_same_subject_only():
    assert polarity("The refund is $40, sorry, I mean $45.") == [(40.0, "denied"), (45.0, "asserted")]
    assert polarity("The refund is $40. Actually, it's $45.") == [(40.0, "denied"), (45.0, "asserted")]
    assert polarity("The refund was $40 but it's been corrected to $45.") == [(40.0, "denied"), (45.0, "asserted")]
    assert polarity("The refund is $40. Actually, the $6 fee was waived.") == [(40.0, "asserted"), (6.0, "asserted")]
    assert polarity("The wait is 31 days. The wait is 30 days.")[0][1] == "asserted"  # `wait` as a noun


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Is it $40?", "asked"),
        ("Your refund is $40, right?", "asked"),
        ("Would the refund be $40?", "asked"),
        ("Your refund is $40, is there anything else I can help with?", "asserted"),
        ("Your refund is $40 - anything else?", "asserted"),
        ("It might be $40.", "hedged"),
        ("Maybe $40.", "hedged"),
        ("I think it could be $40.", "hedged"),
        ("The refund is $40, I think.", "hedged"),
        ("Not sure, but the refund is $40.", "hedged"),
        ("The refund is $40, if I'm not mistaken.", "hedged"),
        ("Refund: $40 (unconfirmed).", "hedged"),
        ("It's either $40 or so.", "hedged"),
        ("$40 is also possible.", "hedged"),
        ("The refund is probably $40.", "hedged"),
        ("You might want to keep the receipt; your refund is $40.", "asserted"),
        ("Your refund of $40 should arrive in 5-7 days, though it may take longer.", "asserted"),
        ("It's likely to arrive on May 20; the refund is $40.", "asserted"),
        ("Your refund will be $40.", "asserted"),
    ],
)
def test_questions_and_hedges(text, expected):
    assert (40.0, expected) in polarity(text)


def test_an_alternative_sentence_hedges_the_value_before_it_too():
    assert polarity("It's $40. Or $45. Or $50.") == [(40.0, "hedged"), (45.0, "hedged"), (50.0, "hedged")]
    assert polarity("Is it $40? Or 45?")[-1] == (45.0, "asked")  # an amount offered without its `$`


def test_polarity_of_any_stretch_is_there_for_claims_about_actions():
    claims = read_claims("I did not cancel the order. Did I refund it? I might have charged you.")
    text = claims.parsed.text
    spans = {word: (text.index(word), text.index(word) + len(word)) for word in ("cancel", "refund", "charged")}
    assert {w: claims.polarity_at(*span) for w, span in spans.items()} == {
        "cancel": "denied",
        "refund": "asked",
        "charged": "hedged",
    }


# -- subjects and rivals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Is it $40? Or $45? Perhaps $50.",
        "It's $40. Or $45. Or $50.",
        "$40. $45. $50.",
        "The refund is $40. The refund is $45.",
        "Your refund is $40. You'll get $45 back.",
        "Refund: $40. Money back: $45.",
        "The refund is $40. It could also be $45.",
        "The refund is $40. Then again, $45 is possible.",
        "Refund: $45? $40?",
        "The refund is $40. Hmm, $45 maybe.",
        "The refund is forty dollars. No wait, forty-five.",
        "- Refund: $40\n- Refund: $45",
        "It's $45. Or maybe it's $40. Hard to say.",
    ],
)
def test_guesses_fail_however_they_are_spread(answer):
    assert not grade_answer([MoneyFact(money=40)], [], answer, reference="The agent said the refund is $40.")[0]


@pytest.mark.parametrize(
    "answer",
    [
        "$10 + $5 + $25 = $40.",
        "Your refund is $40: $34 for the item and $6 for shipping.",
        "The refund is $40. Your other order, #W1234567, came to $45.",
        "The refund is $40; the refund for order #W7 was $12.",
        "I've refunded $40 to your card and $5 to your gift card.",
        "Your order total was $45 and is now $40 after the fee.",
        "The refund is $40. Would you like me to apply the $5 coupon as well?",
        "| What | Amount |\n|---|---|\n| Refund | $40 |\n| Order total | $45 |",
        "**Refund:** $40\n**Order total:** $45",
        "The refund is $40 instead of $45.",
    ],
)
def test_values_of_other_subjects_are_no_rivals(answer):
    ok, reason = grade_answer([MoneyFact(money=40)], [], answer, reference="The agent said the refund is $40.")
    assert ok, reason


def test_an_unlabelled_part_of_a_sum_states_nothing_alone():
    ok, reason = grade_answer([MoneyFact(money=10)], [], "$10 + $5 + $25 = $40.")
    assert not ok and "unlabelled part of a sum" in reason
    assert grade_answer([MoneyFact(money=10)], [], "$10 shipping + $5 tax + $25 item = $40.")[0]


def test_the_other_time_zone_and_the_end_of_a_range_are_no_rivals():
    reference = "The agent said the flight departs at 09:10."
    assert grade_answer([TimeFact(time="09:10")], [], "It departs at 9:10 AM ET (6:10 AM PT).", reference=reference)[0]
    assert grade_answer([TimeFact(time="16:00")], [], "The all-hands runs from 4pm to 5pm.")[0]
    assert not grade_answer([TimeFact(time="16:00")], [], "The all-hands is at 4pm, or 5pm.")[0]


def test_two_facts_of_one_kind_with_their_subjects_swapped_fail():
    facts = [TimeFact(time="07:05"), TimeFact(time="09:10")]
    reference = "The agent said it departs at 07:05 and arrives at 09:10."
    ok, reason = grade_answer(facts, [], "It departs at 9:10 and arrives at 7:05.", reference=reference)
    assert not ok and "stated of another fact's subject: 07:05" in reason
    for answer in (
        "It departs at 7:05 and arrives at 9:10.",
        "Departure is at 7:05 AM; you land at 9:10 AM.",
        "It leaves at 7:05 and gets in at 9:10.",
        "7:05 departure, 9:10 arrival.",
    ):
        ok, reason = grade_answer(facts, [], answer, reference=reference)
        assert ok, (answer, reason)


# -- real tasks of every world, both ways -------------------------------------------------------------

# world, task, cheap answers (each must fail), natural correct answers (each must pass)
REAL = [
    (
        "retail",
        "cancel-pending-order",
        [
            "I cancelled order #W0006911. Your refund is $39.98 - that is incorrect.",
            "I cancelled order #W0006911. Is your refund $39.98?",
            "I cancelled order #W0006911. Your refund might be $39.98.",
            "I cancelled order #W0006911. Is it $39.98? Or $45.98? Perhaps $41.",
            "I cancelled order #W0006911; your refund is $39.98, sorry, I mean $45.98.",
        ],
        [
            "I've cancelled order #W0006911; the full $39.98 goes back to your original payment method.",
            "Done! Order #W0006911 is cancelled. Refund: $39.98, back on your card in 5-7 business days.",
            "Your order is cancelled and you'll get 39.98 dollars back. Anything else I can do?",
        ],
    ),
    (
        "retail",
        "switch-two-items-net-difference",
        [
            "The net difference is $407.95 and the new order total is $1.00.",
            "The net difference is $1.00 and the new order total is $407.95, or maybe $408.95.",
        ],
        [
            "Both items are switched. You paid a net difference of $1.00, and your order now totals $407.95.",
            "New order total: $407.95. Net difference settled with PayPal: $1.00.",
        ],
    ),
    (
        "retail",
        "track-shipped-order",
        [
            "It's in transit (tracking 7029190570717) and it may arrive on May 20.",
            "Tracking 7029190570717, in transit. Will it arrive May 20? Or May 21?",
        ],
        [
            "It's in transit with FedEx, tracking number 7029190570717, and should arrive Wed, May 20.",
            "Tracking no. 7029190570717: in transit, expected Weds. 5/20.",
        ],
    ),
    (
        "airline",
        "lookup-cancellation-quote-two-reasons",
        [
            "You'd get $164 back if you cancel for illness, and $364 for a change of plans.",
            "For illness: $364. For a change of plans: is it $164?",
        ],
        [
            "If you cancel because you're ill, you get $364 back; for a change of plans it's $164.",
            "Illness: $364 refund. Change of plans: $164 refund (the $100 fee applies).",
        ],
    ),
    (
        "airline",
        "lookup-delayed-flight-new-time",
        [
            "It's delayed 295 minutes and leaves at 00:45 - or maybe 01:45.",
            "It's delayed by 295 minutes. Is the new departure 00:45?",
            "It's delayed by 295 minutes and now leaves at 00:45. That's wrong, sorry.",
        ],
        [
            "No, it isn't on time: MRD265 is delayed by 4 hours and 55 minutes and now leaves at 12:45 am.",
            "MRD265 is running 4 hr 55 min late; the new departure is 00:45.",
        ],
    ),
    (
        "airline",
        "book-round-trip-basic-gift-card-first",
        [
            "The total is $59, with $490 on your Mastercard.",
            "Booked! The total is $490, $59 on your card. Or was it $69?",
        ],
        [
            "Booked! The trip costs $490 in total: $431 from your gift card and $59 on your Mastercard ending 2204.",
            "Total $490; the gift card covered $431, so $59 went on the card.",
        ],
    ),
    (
        "bank",
        "available-balance-with-pending",
        [
            "Your available balance is $74.83 and $100,621.72 is pending.",
            "Your available balance might be $100,621.72; pending: $74.83.",
        ],
        [
            "Available balance: $100,621.72 (pending debits of $74.83 are already taken off).",
            "You can spend $100,621.72 right now; $74.83 in card payments is still pending.",
        ],
    ),
    (
        "bank",
        "replace-stolen-card-expedited",
        [
            "Your new card ends in 4262. Or 4263? The $25 rush fee was charged.",
            "Your new card ends in 4262 - that's not right. The $25.00 fee was charged.",
        ],
        [
            "I've blocked the stolen card and ordered an expedited replacement; the $25.00 rush fee was "
            "charged. Your new card ends in 4262.",
            "Card blocked; the replacement comes by express (fee: $25) and ends in 4262.",
        ],
    ),
    (
        "bank",
        "dispute-undelivered-order",
        [
            "I opened a dispute for the $41 charge. Is the provisional credit $41?",
            "I opened a dispute; a provisional credit of $14 - no wait, that's wrong, $41 - is on its way. Or $40.",
        ],
        [
            "The $41 charge from Nordstrom was a mistake by the merchant, so I've opened a dispute; you get a "
            "provisional credit of $41.00 meanwhile.",
            "Dispute opened for the $41 Nordstrom charge on April 30, with a $41 provisional credit while we look.",
        ],
    ),
    (
        "workspace",
        "lookup-panel-time-both-zones",
        [
            "It's at 14:30 your time, which is 10:00 for Ravi.",
            "It's at 10:00 for you. For Ravi it's 14:30, or maybe 15:30.",
        ],
        [
            "The panel is at 10:00 your time, which is 2:30 PM for Ravi.",
            "Wednesday 10:00 AM London time (2:30 PM IST for Ravi in Kolkata).",
        ],
    ),
    (
        "workspace",
        "lookup-acme-renewal-terms",
        [
            "They want it signed by May 29, I think; it's a 4% increase.",
            "Is the deadline Fri 29 May? The main change is a 4% increase.",
        ],
        [
            "Acme want the renewal signed by Fri 29 May; the main change is a 4% price increase.",
            "Deadline: Fri., May 29. The main change: a four percent rate increase on palletised freight.",
        ],
    ),
    (
        "workspace",
        "lookup-train-booking",
        [
            "Booking reference SKR-48213, departing 07:30 - or 08:30, I'm not sure.",
            "Is the booking reference SKR-48213? The train leaves at 07:30.",
        ],
        [
            "Your booking reference is SKR-48213 and the train leaves at 7:30 AM on Thursday 28 May.",
            "Ref. SKR-48213; departure 07:30.",
        ],
    ),
]


@pytest.mark.parametrize(("world", "task_id", "cheap", "natural"), REAL, ids=[t for _, t, _, _ in REAL])
def test_real_tasks_refuse_each_cheap_form_and_pass_natural_answers(world, task_id, cheap, natural):
    t = task(world, task_id)
    for answer in cheap:
        assert not grade(t, answer)[0], answer
    for answer in natural:
        ok, reason = grade(t, answer)
        assert ok, (answer, reason)


SWAPS = [  # two facts of one kind said in other words than the task's, in order and swapped
    (
        "airline",
        "lookup-cancellation-quote-two-reasons",
        "Cancelling for a change of plans gives you {b}, while cancelling because you're sick gives you {a}.",
        ("$364", "$164"),
    ),
    (
        "airline",
        "book-round-trip-basic-gift-card-first",
        "Booked. Total: {a}. Gift card: $431. Mastercard: {b}.",
        ("$490", "$59"),
    ),
    (
        "airline",
        "cancel-within-24-hours-certificate-share",
        "Cancelled within 24 hours: {a} goes back to your Visa and {b} comes back as a new travel certificate.",
        ("$50", "$230"),
    ),
    (
        "bank",
        "available-balance-with-pending",
        "You have {a} available, with {b} of pending debits.",
        ("$100,621.72", "$74.83"),
    ),
    (
        "bank",
        "card-atm-limit-lookup",
        "Your ATM limit is currently {a} a day; a gold card can go up to {b}.",
        ("$500", "$1,000"),
    ),
    (
        "bank",
        "april-savings-statement",
        "Your savings closed April at {a}, and you earned {b} in interest that month.",
        ("$35,654.45", "$121.40"),
    ),
    ("workspace", "lookup-panel-time-both-zones", "It's {a} in London, {b} in Kolkata.", ("10am", "2:30pm")),
    (
        "retail",
        "switch-two-items-net-difference",
        "I've switched both items: the net difference is {b} and the new order total is {a}.",
        ("$407.95", "$1.00"),
    ),
]


@pytest.mark.parametrize(("world", "task_id", "template", "values"), SWAPS, ids=[t for _, t, _, _ in SWAPS])
def test_natural_answers_pass_in_order_and_fail_swapped(world, task_id, template, values):
    t = task(world, task_id)
    a, b = values
    ok, reason = grade(t, template.format(a=a, b=b))
    assert ok, reason
    assert not grade(t, template.format(a=b, b=a))[0]


def test_every_world_is_covered():
    assert {world for world, *_ in REAL} == {world for world, *_ in SWAPS} == set(WORLDS)


@pytest.mark.parametrize("world", WORLDS)
def test_the_baselines_answers_fail_every_real_task_and_the_oracle_passes(world):
    swapped = 0
    for t in load_tasks(world).tasks:
        requirements = [c.requirement for c in t.rubric if c.type == "answer_facts"]
        if not t.answer or not requirements:
            continue
        assert grade(t, t.oracle_answer())[0], t.id
        assert not grade(t, denied_after(t.answer))[0], t.id
        assert not grade(t, spread_guesses(t.answer, t.forbidden))[0], t.id
        answer = swapped_answer(t.answer, requirements[0])
        if answer is not None:
            swapped += 1
            assert not grade(t, answer)[0], (t.id, answer)
    assert swapped or world == "retail"  # the swap applies where two facts of one kind have subjects


# Phrasings written after the grader, as a held-out check: (task, answer); these state every fact,
HELD_OUT_STATED = [
    ("gift-card-balance", "Balance remaining on the gift card: $329.73. Let me know if you'd like to use it!"),
    ("delivery-date-and-carrier", "It arrived on 7 May 2026, delivered by UPS."),
    ("book-one-way-economy", "Done - your one-way economy ticket cost $168.00 in total."),
    (
        "lookup-baggage-allowance",
        "With your status you can bring three checked bags at no charge. Two more would be $100 ($50 per bag).",
    ),
    ("new-payee-hold-free-date", "You'll be able to send money to the new payee without a hold starting May 18."),
    ("lookup-first-slot-with-sofia", "The first time you're both free is Monday, May 18 at 4:30 PM your time."),
]
# and these do not (a value hedged, taken back, corrected, asked or restated with another)
HELD_OUT_WRONG = [
    (
        "cancel-pending-order",
        "Order #W0006911 is cancelled. You should get $39.98 back - though honestly it could end up being $45.98.",
    ),
    ("cancel-pending-order", "Order #W0006911 is cancelled. Refund amount: $39.98?? Or $45.98?? One of those."),
    ("gift-card-balance", "Your gift card has $329.73 - wait, no, that's not right."),
    ("book-one-way-economy", "You're booked. The fare: $168. The fare: $214."),
    ("compensation-cancelled-flight-platinum", "I've issued a certificate worth $400. Correction: $200."),
    ("lookup-next-trip", "Your next trip is reservation 2CVBG9, flight MRD1356, on May 25 or 26."),
    ("new-payee-hold-free-date", "The hold should end on May 18, unless it's May 22."),
    ("march-card-spending", "March spending: $708.65 (not sure, might be $788.65)."),
    (
        "lookup-last-apac-review",
        "The last APAC review is on September 24 at 8:00 AM - that date is wrong, it's actually September 17.",
    ),
    ("lookup-train-booking", "Booking ref SKR-48213? Departure 07:30?"),
]
HELD_OUT = [(t, a, True) for t, a in HELD_OUT_STATED] + [(t, a, False) for t, a in HELD_OUT_WRONG]


@pytest.mark.parametrize(("task_id", "answer", "stated"), HELD_OUT, ids=[f"{t}:{s}" for t, _, s in HELD_OUT])
def test_held_out_phrasings(task_id, answer, stated):
    t = next(t for world in WORLDS for t in load_tasks(world).tasks if t.id == task_id)
    assert grade(t, answer)[0] is stated, grade(t, answer)


# -- generated tasks ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clinic_tasks():
    spec = compile_spec(load_spec(SPECS / "clinic.yaml"))  # the one-call kinds, whose answers these tests read
    tasks = generate_tasks(spec, count=12, seed=0, turns=("write", "lookup", "refusal", "workflow", "recovery"))
    return {t.id: t for t in tasks}


def _generated(tasks: dict[str, Task], prefix: str) -> Task:
    return next(t for key, t in tasks.items() if key.startswith(prefix) and t.answer)


@pytest.fixture(scope="module")
def clinic_count() -> Task:
    """A generated count lookup ("how many ... are there?"): a candidate, since the generator now
    drops it (one call, which the one-step greedy agent makes), but its answer is graded alike."""
    generator = TaskGenerator(compile_spec(load_spec(SPECS / "clinic.yaml")), seed=0, scale="small", turns=("lookup",))
    try:
        return next(t for t in generator.candidates() if any(isinstance(f, CountFact) for f in t.answer))
    finally:
        generator.close()


def test_generated_counts_refuse_each_cheap_form_and_pass_natural_answers(clinic_count):
    t = clinic_count
    (count,) = t.answer
    assert isinstance(count, CountFact)
    n, things = count.count, f"{count.noun}s"
    for answer in (
        f"Are there {n} {things}?",
        f"There might be {n} {things}.",
        f"There are {n} {things}. Or {n + 1}?",
        f"{n} {things} is wrong.",
        f"There are {n} {things}, I think.",
    ):
        assert not grade(t, answer)[0], answer
    for answer in (f"You have {n} {things}.", f"I found {n} {things} on the schedule. Anything else?"):
        assert grade(t, answer)[0], answer


def _phrases(facts) -> list[str]:
    return [str(f.phrase) for f in facts if hasattr(f, "phrase")]


def test_generated_refusals_refuse_each_cheap_form_and_pass_natural_answers(clinic_tasks):
    t = _generated(clinic_tasks, "refusal-003")
    ident, state = (f.id if isinstance(f, IdFact) else str(getattr(f, "phrase", f)) for f in t.answer)
    for answer in (
        f"Is appointment {ident} {state}?",
        f"Appointment {ident} might be {state}.",
        f"Appointment {ident} is {state}, but that is incorrect.",
        # a rival the task forbids; a status its own instruction names is never forbidden (issue 27
        # item 5), so "or maybe <that status>" is not refused: a known gap (docs/rewards.md)
        *(f"Appointment {ident} is {state}, or maybe {rival}." for rival in _phrases(t.forbidden)[:1]),
    ):
        assert not grade(t, answer)[0], answer
    for answer in (
        f"I can't check in appointment {ident}: it is already {state}.",
        f"Appointment {ident} has already been {state}, so there is nothing to check in.",
    ):
        ok, reason = grade(t, answer)
        assert ok, (answer, reason)
    assert not grade(t, denied_after(t.answer))[0]
    assert not grade(t, spread_guesses(t.answer, t.forbidden))[0]


# -- lexing: what people write ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Sept. 30", "Sep 30", "Sept 30th", "Wed, Sept. 30", "Weds 9/30", "30 Sep 2026"])
def test_month_and_weekday_abbreviations_are_dates(text):
    assert [m.value for m in parse(f"It expires {text}.").mentions if m.kind == "date"][0][1:] == (9, 30)


@pytest.mark.parametrize(
    "text", ["(512) 555-0187", "512-555-0187", "512.555.0187", "+1 512 555 0187", "+15125550187", "1-512-555-0187"]
)
def test_phone_numbers_in_any_format_are_one_number(text):
    assert [(m.kind, m.value) for m in parse(f"Call {text} today.").mentions if m.kind != "name"] == [
        ("phone", "+15125550187")
    ]
    assert grade_answer([IdFact(id="512-555-0187")], [], f"Your number on file is now {text}.")[0]


def test_a_run_of_digits_stays_an_id_and_a_card_number_is_no_phone():
    assert [m.kind for m in parse("Tracking 7029190570717.").mentions if m.kind != "name"] == ["id"]
    assert "phone" not in [m.kind for m in parse("Card 4111 1111 1111 1111.").mentions]
    assert not grade_answer([IdFact(id="512-555-0187")], [], "Your number is (512) 555-0188.")[0]


@pytest.mark.parametrize(
    ("money", "answer"),
    [
        (39.98, "Your refund is 39.98."),
        (39.98, "Refund: 39.98"),
        (1006, "The total comes to 1,006."),
        (25, "The fee is 25."),
        (4, "You owe 4 for the difference."),
        (39.98, "It costs 39.98$."),
    ],
)
def test_an_amount_without_a_currency_marker_is_money_where_nothing_else_is_meant(money, answer):
    assert grade_answer([MoneyFact(money=money)], [], answer)[0], answer


@pytest.mark.parametrize(
    "answer", ["Your Visa ending 3998 was charged.", "The total of 25 items.", "You paid with card 2500.", "one worth"]
)
def test_a_number_beside_a_word_of_money_is_not_always_money(answer):
    facts = [MoneyFact(money=3998), MoneyFact(money=25), MoneyFact(money=2500)]
    assert not any(grade_answer([f], [], answer)[0] for f in facts)


def test_states_countries_and_street_words_read_alike():
    assert (place_code("Texas"), place_code("TX"), place_code("United Kingdom"), place_code("USA")) == (
        "tx",
        "tx",
        "gb",
        "us",
    )
    assert canonical_places("895 Bauer Corner Apt. 990, Boise, Idaho") == canonical_places(
        "895 Bauer Cor #990, Boise, ID"
    )
    assert canonical_places("12 Main Street, Unit 4, New York") == canonical_places("12 Main St Apt 4, NY")
    assert grade_answer([NameFact(name="New York")], [], "It ships to NY.")[0]
    assert grade_answer([NameFact(name="TX")], [], "It ships to Austin, Texas.")[0]
    assert grade_answer(["Larkspur Lane"], [], "It goes to 418 Larkspur Ln.")[0]
    assert not grade_answer([NameFact(name="TX")], [], "It ships to Boise, Idaho.")[0]


def test_the_confirmation_naming_rule_reads_addresses_and_phones_in_other_words():
    change = [{"customer_id": "cus_1", "line1": "895 Bauer Corner", "line2": "Apt. 990", "state": "ID"}]
    assert names_the_change("Shall I set your address to 895 Bauer Cor, #990? (yes/no)", change[0], [])
    before = {"id": "adr_1", "line1": "77 Oak Rd", "city": "Austin", "state": "TX"}
    moved = [Change(1, "addresses", "update", json.dumps(["adr_1"]), before, {**before, "state": "ID"})]
    assert names_the_change("Shall I change the state on file to Idaho? (yes/no)", {"address_id": "adr_9"}, moved)
    assert not names_the_change("Shall I change the state on file to Ohio? (yes/no)", {"address_id": "adr_9"}, moved)
    assert not names_the_change("Shall I check your id first? (yes/no)", {"address_id": "adr_9"}, moved)
    phone = {"customer_id": "cus_1", "phone": "512-555-0187"}
    assert names_the_change("Shall I change your phone to +1 512 555 0187?", phone, [])
    assert not names_the_change("Shall I change your phone to +1 512 555 0188?", phone, [])


def test_dates_with_abbreviations_state_date_facts():
    fact = DateFact(date="2026-09-30")
    assert grade_answer([fact], [], "It is valid until Sept. 30, 2026.")[0]
    assert not grade_answer([fact], [], "Is it valid until Sept. 30?")[0]


def test_work_stays_bounded_on_long_or_adversarial_answers():
    """A pasted document is refused from its parse alone, and a reply under the document limit
    full of values joined by `or` is judged without reading every pair of values."""
    facts = [MoneyFact(money=39.98)]
    pasted = " ".join(f"The refund for order #W{i:07d} is ${i}.00, not ${i + 1}.00." for i in range(3000))
    guesses = " ".join("$39.98 or $40.00;" for _ in range(130))
    for answer, reason in ((pasted, "a document, not a reply"), (guesses, "hedged with '$40.00'")):
        started = time.process_time()
        ok, why = grade_answer(facts, [], answer, reference="The refund is $39.98.")
        assert not ok and reason in why
        assert time.process_time() - started < 3.0


def test_a_verdict_on_an_ids_record_or_a_counts_items_leaves_the_value_asserted():
    """`the $40 refund is wrong` denies the amount; `the #W1 order is wrong` says the order was
    placed in error and `the 3 bags are wrong` that the bags are, so both values stay stated."""
    assert polarity("The 3 bags are wrong, so I removed them.") == [(3.0, "asserted")]
    claims = read_claims("The #W0006911 order is wrong, so I cancelled it.").claims
    assert [(c.kind, c.polarity) for c in claims if c.kind == "id"] == [("id", "asserted")]
    assert polarity("Your 10:00 appointment time is wrong; it is 11:00.") == [(600, "denied"), (660, "asserted")]


def test_a_negated_action_done_to_a_pronoun_leaves_what_it_was_for_stated():
    """`I could not do that for PR7454` relays a refusal about PR7454 (a refusal task's answer);
    `it is not PR7454` and `not for $40` still deny."""
    claims = read_claims("I could not do that for PR7454: the doctor is not accepting new appointments.").claims
    assert [(c.kind, c.polarity) for c in claims if c.kind == "id"] == [("id", "asserted")]
    assert polarity("I did not do this for $40.") == [(40.0, "asserted")]
    assert [c.polarity for c in read_claims("It is not PR7454.").claims if c.kind == "id"] == ["denied"]
    assert polarity("Not for $40.") == [(40.0, "denied")]
