"""The confirmation classes of issue 28 (items 3 and 6) on real tasks of every hand-built world,
through the runner (a played agent over MCP, the scripted user's answers, the full conversation
graded; `tests/grading/solution_audit.py`).

- retail, airline, bank (writes under confirmation): both ways. The cheap forms fail: a request
  naming the records with another action (the scripted user says no, and the check fails), one
  request naming only the first of several writes. At least two natural forms pass: a request in
  prose with values as people write them (dates, state codes, street words), a bulleted list, and
  a request before each write.
- workspace (no task puts a write under confirmation): the scripted user reads the action and the
  values as people write them on its tasks: other actions get a no (deleting instead of creating,
  declining instead of accepting), the user's own words for the action and abbreviations (`Mon.`,
  `5/18`, `3:30pm`, `RSVP`, `Thurs.`) get a yes, another person's email a no."""

from __future__ import annotations

import pytest

from mcpsim.tasks import load_tasks
from mcpsim.tasks._dialogue import NO_REPLY, YES_REPLY, confirmation_reply
from mcpsim.world import load_world
from tests.grading.solution_audit import Worlds, _writes, ask_list, ask_other_action, ask_prose, run_audit

NATURAL = ("gold", "request in prose", "request as a list", "one request per write")
CHEAP = ("request for another action", "one request for several writes")
# world -> tasks with writes under confirmation (one with writes of two actions)
TASKS = {
    "retail": ["cancel-pending-order", "exchange-hoodie-size", "redeem-and-pay-pending-order"],
    "airline": [
        "compensation-cancelled-flight-platinum",
        "cancel-airline-cancelled-no-compensation",
        "hard-delay-claims-cancel-and-bag",
    ],
    "bank": ["dispute-duplicate-charge", "dispute-unknown-charge-freeze-first"],
}


@pytest.mark.parametrize("world", sorted(TASKS))
def test_natural_requests_pass_and_cheap_ones_fail(world):
    outcomes = run_audit(Worlds(), [world], only=TASKS, classes=[*NATURAL, *CHEAP])
    tried = {(o.attempt.task, o.attempt.cls): o for o in outcomes}
    for task in TASKS[world]:
        natural = [tried[task, cls] for cls in NATURAL if (task, cls) in tried]
        assert len(natural) >= 3, task  # the gold and at least two natural forms of ours
        assert all(o.passed for o in natural), [(o.attempt.cls, o.why) for o in natural if not o.passed]
        assert not tried[task, "request for another action"].passed, task
    several = [o for o in outcomes if o.attempt.cls == "one request for several writes"]
    assert several and not any(o.passed for o in several)


# tasks of one action (where another action is one the user does not want)
ONE_ACTION = {
    "retail": ["cancel-pending-order", "exchange-hoodie-size"],
    "airline": ["compensation-cancelled-flight-platinum", "cancel-airline-cancelled-no-compensation"],
    "bank": ["dispute-duplicate-charge"],
}


@pytest.mark.parametrize("world", sorted(ONE_ACTION))
def test_the_scripted_user_says_no_to_another_action_and_yes_to_natural_forms(world):
    tasks, loaded = load_tasks(world), load_world(world)
    for task_id in ONE_ACTION[world]:
        task = tasks.get(task_id)
        write = next(a for a in _writes(loaded, task) if "verify" not in a.tool)
        assert confirmation_reply(ask_other_action(write, 0), task) == NO_REPLY
        assert confirmation_reply(ask_other_action(write, 1), task) == NO_REPLY
        assert confirmation_reply(ask_prose([write]), task) == YES_REPLY
        assert confirmation_reply(ask_list([write]), task) == YES_REPLY


# workspace task -> requests the user must agree to, and requests it must refuse
WORKSPACE = {
    "cal-book-tom-redlines": (
        [
            'Shall I create the event "MSA redlines review" with tom.okafor@larkspurlabs.com on Mon, May 18, '
            "3:30-4:00 PM?",
            "Just to confirm: I'll book 'MSA redlines review' for Mon. 5/18 from 3:30pm to 4pm and invite Tom "
            "Okafor. OK?",
        ],
        [
            'Shall I delete the event "MSA redlines review" on Mon, May 18?',
            'Shall I create the event "MSA redlines review" with jack.turner@larkspurlabs.com on Mon, May 18?',
        ],
    ),
    "mail-send-vendor-sheet-to-priya": (
        [
            'Shall I send the email "Vendor comparison" to priya.nair@larkspurlabs.com with the sheet attached?',
            "Want me to fwd the vendor comparison sheet to Priya Nair? Please confirm.",
        ],
        ['Shall I delete the email "Vendor comparison"?'],
    ),
    "cal-accept-allhands": (
        ["Shall I accept the all-hands invitation for you?", "I'll RSVP yes to the All-hands on Thurs. Is that OK?"],
        ["Shall I decline the all-hands invitation?", "I won't accept it; I'll leave the invitation as it is. OK?"],
    ),
}


@pytest.mark.parametrize("task_id", sorted(WORKSPACE))
def test_the_workspace_user_reads_actions_and_abbreviations(task_id):
    task = load_tasks("workspace").get(task_id)
    agreed, refused = WORKSPACE[task_id]
    for request in agreed:
        assert confirmation_reply(request, task) == YES_REPLY, request
    for request in refused:
        assert confirmation_reply(request, task) == NO_REPLY, request
