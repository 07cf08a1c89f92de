"""Confirmation turns: the final answer is the agent's last message, the scripted user answers
"Shall I go ahead?" (yes to what it asked for, no to anything else), the `confirmed` check grades
the dialogue, and the conversation reaches the grader over every transport."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from mcpsim.cli import main
from mcpsim.engine._store import Change
from mcpsim.engine._templates import TemplateCache
from mcpsim.grading import Verifier
from mcpsim.runner._agents import Turn
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._loop import final_answer
from mcpsim.runner._run import RunConfig, run_episodes
from mcpsim.runner._users import ScriptedUser
from mcpsim.serve._host import EpisodeManager
from mcpsim.tasks import Action, Confirmed, Say, Task, UserSpec
from mcpsim.tasks._dialogue import (
    CONFIRM_QUESTION,
    MAX_CONFIRMATIONS_IN_A_ROW,
    MAX_REFUSALS,
    NO_REPLY,
    YES_REPLY,
    confirmation_question,
    confirmation_reply,
    is_affirmative,
    is_confirmation_request,
)
from mcpsim.tasks._rubric import FieldEquals
from mcpsim.tasks._scenario import gold_steps, run_solution, task_episode
from mcpsim.tasks._task import ConfirmationReply
from mcpsim.trajectories._records import FunctionCall, Message, ToolCall, Trajectory, Usage
from mcpsim.world._registry import load_world

CANCEL = "cancel-pending-order"  # retail: cancel #W0006911, refund $39.98
BANK_TASK = "update-email-and-phone"  # bank: its rubric has a `confirmed` check


def lines(out: Path) -> list[Trajectory]:
    return [Trajectory.model_validate_json(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def say(text: str) -> Message:
    return Message(role="assistant", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


# -- the final answer ---------------------------------------------------------------------------


def test_the_final_answer_is_the_last_assistant_message_with_text_or_the_explicit_one():
    call = Message(role="assistant", tool_calls=[ToolCall(id="c", function=FunctionCall(name="t", arguments="{}"))])
    messages = [
        user("Cancel my order."),
        say("It would be $10, $20 or $39.98. Shall I go ahead?"),
        user("Yes."),
        call,
        Message(role="tool", tool_call_id="c", name="t", content="{}"),
        say("Refunded $39.98."),
        call,
    ]
    # Today's main joined every message, so an agent could list every candidate value early on.
    assert final_answer(messages) == "Refunded $39.98."
    assert final_answer(messages, explicit="Explicit.") == "Explicit."
    assert final_answer([user("Hi")]) == ""


@dataclass
class StatesEarlyThenVague:
    """Replays the gold, states the facts in a progress note, then ends on a vague answer."""

    name: str = "early"
    needs_task: bool = True

    async def respond(self, turn: Turn) -> Message:
        assert turn.task is not None
        if turn.step < len(turn.task.gold):
            a = turn.task.gold[turn.step]
            return Message(
                role="assistant",
                tool_calls=[
                    ToolCall(id=f"c{turn.step}", function=FunctionCall(name=a.tool, arguments=json.dumps(a.args)))
                ],
            )
        if turn.step == len(turn.task.gold):
            return say(f"Note to self: {turn.task.oracle_answer()} Anything else I can help you with?")
        return say("All done.")

    async def aclose(self) -> None:
        pass


@pytest.mark.anyio
async def test_facts_stated_only_before_the_last_message_do_not_make_the_answer(tmp_path, retail):
    task = retail.tasks.get(CANCEL).model_copy(update={"user": UserSpec(turns=["Thanks. And the result?"])})
    backend = InProcessBackend(EpisodeManager(TemplateCache(), ttl_seconds=None))
    with anyio.fail_after(120):
        await run_episodes(
            RunConfig(world="retail", tasks=[task], out=tmp_path), backend, StatesEarlyThenVague, ScriptedUser
        )
    (t,) = lines(tmp_path)
    answer_check = next(c for c in t.verdict["checks"] if c["type"] == "answer_facts")
    assert t.verdict["answer"] == "All done." and not answer_check["passed"] and t.reward == 0.0


# -- recognising a request and a yes ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        CONFIRM_QUESTION,
        "Shall I go ahead?",
        "I'll cancel order #W0006911. Do you want me to proceed?",
        "Would you like me to cancel it now?",
        "Please confirm (yes/no).",
        "Can you confirm that I should cancel it?",
        "That is order #W1 for $39.98. Is that correct?",
        "Shall I open a dispute for the $41.00 Nordstrom charge?",  # a decimal point does not end the sentence
    ],
)
def test_requests_for_the_go_ahead_are_recognised(text):
    assert is_confirmation_request(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Your order is cancelled; $39.98 comes back to you.",
        "Is there anything else I can help you with?",
        "Could you confirm your email address?",
        "I have confirmed the refund.",
        "What is your zip code?",
    ],
)
def test_other_messages_are_not_requests(text):
    assert not is_confirmation_request(text)


@pytest.mark.parametrize("text", [YES_REPLY, "yes", "Yes.", "Sure, go ahead", "OK", "Please proceed.", "Correct."])
def test_agreement_is_recognised(text):
    assert is_affirmative(text)


@pytest.mark.parametrize(
    "text",
    [
        NO_REPLY,
        "no",
        "No, go ahead and cancel the other one.",
        "Don't go ahead.",
        "Wait, change the address first.",
        "I didn't ask for that.",
        "",
        "Hmm.",
        "Yes, but wait: use the other card.",
        "Yes... hold on, not that order.",
    ],
)
def test_refusal_and_anything_else_are_not_agreement(text):
    assert not is_affirmative(text)


# -- the scripted user's answer -----------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        CONFIRM_QUESTION,
        "I will cancel order #W0006911 because you no longer need it; $39.98 goes back to you. Shall I go ahead?",
        "Should I cancel #W0006911 for you, Christine?",
    ],
)
def test_the_user_says_yes_to_what_it_asked_for(retail, question):
    assert confirmation_reply(question, retail.tasks.get(CANCEL)) == YES_REPLY


def test_a_writes_consequences_are_what_the_user_expects_to_hear(retail):
    """On a task that changes something, the answer facts are the write's consequences (a refund
    that sums two orders): an agent that adds them up itself is not refused."""
    task = retail.tasks.get("cancel-two-pending-orders")
    [total] = [f.money for f in task.answer if hasattr(f, "money")]
    question = f"I'll cancel both orders; you get ${total:,.2f} back. Shall I go ahead?"
    assert confirmation_reply(question, task) == YES_REPLY
    assert (
        confirmation_reply(f"I'll cancel both orders; you get ${total + 1:,.2f} back. Shall I go ahead?", task)
        == NO_REPLY
    )


@pytest.mark.parametrize(
    "question",
    [
        "Shall I cancel order #W0006912?",  # another order
        "I will cancel #W0006911 and refund $80.00. Shall I go ahead?",  # an amount it never heard of
        "Shall I also cancel the order of Brad Mitchell?",  # someone else
    ],
)
def test_the_user_says_no_to_what_it_did_not_ask_for(retail, question):
    assert confirmation_reply(question, retail.tasks.get(CANCEL)) == NO_REPLY


def test_the_user_recognises_its_own_records_in_what_the_gold_reads_returned(retail):
    task = retail.tasks.get(CANCEL)
    question = "Shall I cancel #W0006911, your 2 Aero Dotted Notebooks, and refund $39.98 to your card?"
    assert confirmation_reply(question, task) == NO_REPLY  # the instruction never names the notebooks
    seen = run_solution(task_episode(load_world("retail"), task), task, list(task.gold[:2]))  # the gold's reads
    assert confirmation_reply(question, task, seen) == YES_REPLY


def test_a_task_scripts_its_own_answers_in_order(retail):
    task = retail.tasks.get(CANCEL).model_copy(
        update={
            "user": UserSpec(
                confirmations=[
                    ConfirmationReply(match="#W0006911", reply="No, wait: let me check with my wife first."),
                    ConfirmationReply(match="go ahead", reply="Yes."),
                ]
            )
        }
    )
    assert confirmation_reply("Shall I cancel order #W0006911? Shall I go ahead?", task).startswith("No, wait")
    assert confirmation_reply("Shall I go ahead?", task) == "Yes."
    assert confirmation_reply("Do you want me to proceed?", task) == YES_REPLY


def test_the_scripted_user_answers_confirmations_without_using_up_its_turns(retail):
    task = retail.tasks.get(CANCEL).model_copy(update={"user": UserSpec(turns=["Also, when will it ship?"])})
    scripted = ScriptedUser(task)

    def reply(messages: list[Message]) -> str | None:
        return anyio.run(scripted.reply, messages, Usage())

    conversation = [user(task.instruction), say("Shall I go ahead?")]
    assert reply(conversation) == YES_REPLY
    conversation += [user(YES_REPLY), say("Cancelled; $39.98 comes back.")]
    assert reply(conversation) == "Also, when will it ship?"  # the scripted turn is still there
    conversation += [user("Also, when will it ship?"), say("Shall I cancel order #W0006912 too?")]
    assert reply(conversation) == NO_REPLY
    conversation += [user(NO_REPLY), say("It will not ship: it is cancelled.")]
    assert reply(conversation) is None  # turns exhausted: the conversation ends
    assert reply(conversation) is None  # and the same conversation always gets the same answer


def test_an_agent_that_only_ever_asks_stops_getting_answers(retail):
    task = retail.tasks.get(CANCEL)
    scripted = ScriptedUser(task)
    conversation = [user(task.instruction)]
    for _ in range(MAX_CONFIRMATIONS_IN_A_ROW):
        conversation.append(say("Shall I go ahead?"))
        said = anyio.run(scripted.reply, conversation, Usage())
        assert said == YES_REPLY
        conversation.append(user(said))
    conversation.append(say("Shall I go ahead?"))
    assert anyio.run(scripted.reply, conversation, Usage()) is None


def test_the_user_is_no_oracle_for_the_answer(retail):
    """A lookup's answer facts are what the agent must read: asking the user to confirm a guess
    gets the same no for the right value as for a wrong one, until the agent has read it."""
    task = retail.tasks.get("gift-card-balance")
    assert [f.model_dump() for f in task.answer] == [{"money": 329.73, "tolerance": 0.005}]  # to be read
    guesses = ["Your balance is $329.73. Shall I go ahead?", "Your balance is $300.00. Shall I go ahead?"]
    assert {confirmation_reply(g, task) for g in guesses} == {NO_REPLY}
    # a tool that echoes the guess (the calculator, an error naming the argument) shows nothing
    echoed = [
        {"role": "assistant", "tool_calls": [_call("c1", "calculate", {"expression": "329.73"})]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"result": 329.73})},
    ]
    assert confirmation_reply(guesses[0], task, echoed) == NO_REPLY
    # the gold solution's own read shows the balance: then the user recognises it
    [lookup, details] = task.gold
    read = [
        {"role": "assistant", "tool_calls": [_call("c2", details.tool, details.args)]},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"gift_cards": [{"balance": 329.73}]})},
    ]
    assert confirmation_reply(guesses[0], task, read) == YES_REPLY


def _read(call_id: str, name: str, args: dict, content: str) -> list[dict]:
    return [
        {"role": "assistant", "tool_calls": [_call(call_id, name, args)]},
        {"role": "tool", "tool_call_id": call_id, "content": content},
    ]


def test_on_a_write_the_user_knows_the_amounts_of_its_own_records_read_with_any_tool(retail):
    """A careful agent names the amount it read before it writes: on a task that changes
    something, the user recognises amounts from any successful read of its own records (a call
    naming an identifier the task gives), not only the gold solution's reads; never from a call
    about nothing of its own, an error's text, or a number the call itself carried (an echo)."""
    task = retail.tasks.get(CANCEL)
    question = "Your order #W0006911 came to $57.12 in all. Shall I cancel it?"
    assert confirmation_reply(question, task) == NO_REPLY  # nothing shows $57.12 yet
    record = json.dumps({"order_id": "#W0006911", "items": [{"price": 57.12}]})
    other_read = _read("r1", "get_order_details", {"order_id": "#W0006911", "verbose": True}, record)
    assert confirmation_reply(question, task, other_read) == YES_REPLY  # not a gold call: its own record
    assert confirmation_reply(question.replace("57.12", "57.13"), task, other_read) == NO_REPLY
    unrelated = _read("r2", "search_products", {"query": "notebook"}, json.dumps({"price": 57.12}))
    assert confirmation_reply(question, task, unrelated) == NO_REPLY  # names none of the user's records
    failed = _read("r3", "get_order_details", {"order_id": "#W0006911", "x": 1}, "Error: over $57.12; call us")
    assert confirmation_reply(question, task, failed) == NO_REPLY  # an error's text is no record
    echo = _read("r4", "calculate", {"expression": "#W0006911 57.12"}, json.dumps({"result": 57.12}))
    assert confirmation_reply(question, task, echo) == NO_REPLY  # the guess went in with the call


def test_the_user_reads_the_conversation_only_as_far_as_the_question_needs(retail, monkeypatch):
    """A question that names no amount, identifier or name is answered without reading the
    conversation; the user's own records are searched only on a write, and only for an amount
    that the task and the gold reads do not account for. Same answers as a full read."""
    from mcpsim.tasks import _dialogue as dialogue

    def never(*_args: object) -> Iterator[object]:
        raise AssertionError("the conversation was read")
        yield  # pragma: no cover

    cancel, lookup = retail.tasks.get(CANCEL), retail.tasks.get("gift-card-balance")
    record = _read("r1", "get_order_details", {"order_id": "#W0006911", "verbose": True}, '{"price": 57.12}')
    searched: list[str] = []
    own_records = dialogue._own_records_read
    monkeypatch.setattr(dialogue, "_own_records_read", lambda *a: searched.append("own") or own_records(*a))

    assert dialogue.unasked("Shall I go ahead?", cancel, never()) == []  # nothing named: not read at all
    assert dialogue.unasked("Shall I cancel #W0006911 and refund $39.98?", cancel, record) == []
    assert searched == []  # every amount is the task's own: its records are not searched
    assert dialogue.unasked("Your balance is $57.12. Shall I go ahead?", lookup, record) == ["$57.12"]
    assert searched == []  # a lookup: its records are never searched
    assert dialogue.unasked("#W0006911 came to $57.12. Shall I cancel it?", cancel, record) == []
    assert searched == ["own"]  # a write with an amount the task does not know: searched, once


def test_on_a_lookup_only_the_gold_reads_show_the_user_its_records(retail):
    task = retail.tasks.get("gift-card-balance")
    [lookup, details] = task.gold
    question = "Your balance is $329.73. Shall I go ahead?"
    content = json.dumps({"gift_cards": [{"balance": 329.73}]})
    other = _read("r1", details.tool, {**details.args, "verbose": True}, content)
    assert confirmation_reply(question, task, other) == NO_REPLY  # the answer: only the gold read shows it
    assert confirmation_reply(question, task, _read("r2", details.tool, details.args, content)) == YES_REPLY


def test_a_write_tasks_amounts_in_cents_are_known_in_dollars(retail):
    """A factory world keeps money in cents in columns named for what they hold (`balance`): the
    user of a task that changes something hears $188.39 for a rubric's 18839."""
    base = retail.tasks.get(CANCEL)
    check = FieldEquals.model_validate(
        {
            "type": "field_equals",
            "requirement": "The balance is $188.39.",
            "table": "customers",
            "where": {"id": "c1"},
            "values": {"balance": 18839},
            "noop_passes": False,
        }
    )
    task = base.model_copy(update={"rubric": [*base.rubric, check]})
    question = "I'll cancel #W0006911; your balance will then be $188.39. Shall I go ahead?"
    assert confirmation_reply(question, base) == NO_REPLY
    assert confirmation_reply(question, task) == YES_REPLY
    assert confirmation_reply(question.replace("188.39", "188.40"), task) == NO_REPLY


def _call(call_id: str, name: str, args: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_the_user_stops_after_so_many_noes(retail):
    """Guess-and-check through confirmation requests ends: after MAX_REFUSALS no's the user says
    nothing more, even with tool calls in between (which reset the yes cap, not this one)."""
    task = retail.tasks.get(CANCEL)
    scripted = ScriptedUser(task)
    conversation = [user(task.instruction)]
    for n in range(MAX_REFUSALS):
        conversation.append(say(f"Shall I refund ${100 + n}.00 to card 4242?"))
        said = anyio.run(scripted.reply, conversation, Usage())
        assert said == NO_REPLY
        conversation += [user(said), Message(role="tool", tool_call_id=f"t{n}", content="{}")]
    conversation.append(say("Shall I cancel order #W0006911? (yes/no)"))  # the right question, too late
    assert anyio.run(scripted.reply, conversation, Usage()) is None


# -- an agent that asks before writing passes ---------------------------------------------------


@dataclass
class AsksFirst:
    """Replays the gold actions of a retail task, asking `question` before the first write, as the
    retail, airline and bank policies require; then gives the oracle's answer."""

    question: str = CONFIRM_QUESTION
    name: str = "asks-first"
    needs_task: bool = True
    steps: list = field(default_factory=list)

    async def respond(self, turn: Turn) -> Message:
        assert turn.task is not None
        if not self.steps:
            world = load_world("retail")
            first = next(i for i, a in enumerate(turn.task.gold) if world.tools[a.tool].writes)
            self.steps = [*turn.task.gold[:first], Say(say=self.question), *turn.task.gold[first:]]
        if turn.step < len(self.steps):
            step = self.steps[turn.step]
            if isinstance(step, Say):
                return say(step.say)
            return Message(
                role="assistant",
                tool_calls=[
                    ToolCall(id=f"c{turn.step}", function=FunctionCall(name=step.tool, arguments=json.dumps(step.args)))
                ],
            )
        return say(turn.task.oracle_answer())

    async def aclose(self) -> None:
        pass


@pytest.mark.anyio
async def test_an_agent_that_asks_before_its_first_write_passes_a_real_retail_write_task(tmp_path, retail):
    """On main before this change the scripted user had no scripted turn to say after "Shall I go
    ahead?", so the conversation ended there: no write was made and the task scored 0 (and the
    question was graded as part of the answer)."""
    backend = InProcessBackend(EpisodeManager(TemplateCache(), ttl_seconds=None))
    question = (
        "I can cancel order #W0006911 (reason: no longer needed); $39.98 will go back to your original "
        "payment method. Shall I go ahead?"
    )
    with anyio.fail_after(120):
        await run_episodes(
            RunConfig(world="retail", tasks=[retail.tasks.get(CANCEL)], out=tmp_path),
            backend,
            lambda: AsksFirst(question),
            ScriptedUser,
        )
    (t,) = lines(tmp_path)
    spoken = [(m.role, m.content) for m in t.messages if m.role in ("user", "assistant") and m.content]
    assert spoken[1:3] == [("assistant", question), ("user", YES_REPLY)]
    assert [c.tool for c in t.calls] == [a.tool for a in retail.tasks.get(CANCEL).gold]
    assert t.reward == 1.0 and t.verdict["answer"] == retail.tasks.get(CANCEL).oracle_answer()


@pytest.mark.anyio
async def test_an_agent_asking_about_the_wrong_order_hears_no(tmp_path, retail):
    backend = InProcessBackend(EpisodeManager(TemplateCache(), ttl_seconds=None))
    with anyio.fail_after(120):
        await run_episodes(
            RunConfig(world="retail", tasks=[retail.tasks.get(CANCEL)], out=tmp_path),
            backend,
            lambda: AsksFirst("Shall I cancel order #W0006912?"),
            ScriptedUser,
        )
    (t,) = lines(tmp_path)
    assert [m.content for m in t.messages if m.role == "user"][1] == NO_REPLY


# -- the confirmed check ------------------------------------------------------------------------


def _graded(bank_tasks, steps, *, answer: str | None = None, conversation: bool = True):
    task = bank_tasks.get(BANK_TASK)
    world = load_world("bank")
    episode = task_episode(world, task)
    try:
        said = run_solution(episode, task, steps)
        verdict = Verifier(world, bank_tasks).grade(
            episode, task, answer or task.oracle_answer(), conversation=said if conversation else None
        )
    finally:
        episode.close()
    (check,) = [c for c in verdict.checks if c.type == "confirmed"]
    return verdict, check


def _write_index(task: Task) -> int:
    world = load_world("bank")
    return next(i for i, a in enumerate(task.gold) if world.tools[a.tool].writes)


def test_asked_and_agreed_before_the_write_passes(bank):
    task = bank.tasks.get(BANK_TASK)
    verdict, check = _graded(bank.tasks, gold_steps(task, load_world("bank")))
    assert check.passed and "agreed" in check.reason
    assert verdict.passed


def test_writing_without_asking_fails(bank):
    _, check = _graded(bank.tasks, list(bank.tasks.get(BANK_TASK).gold))
    assert not check.passed and "without asking" in check.reason


def test_writing_after_the_user_said_no_fails(bank):
    task = bank.tasks.get(BANK_TASK)
    i = _write_index(task)
    wrong = Say(say="I will also close your account 99999999. Shall I go ahead?")  # the user declines
    _, check = _graded(bank.tasks, [*task.gold[:i], wrong, *task.gold[i:]])
    assert not check.passed and "did not agree" in check.reason and NO_REPLY in check.reason


def test_asking_only_after_the_write_fails(bank):
    task = bank.tasks.get(BANK_TASK)
    _, check = _graded(bank.tasks, [*task.gold, Say(say=CONFIRM_QUESTION)])
    assert not check.passed and "without asking" in check.reason


def test_a_refused_write_before_asking_does_not_count_as_the_write(bank):
    task = bank.tasks.get(BANK_TASK)
    i = _write_index(task)
    refused = Action(tool=task.gold[i].tool, args={**task.gold[i].args, "customer_id": "cus_0000000"}, expect="error")
    world = load_world("bank")
    asks = Say(say=confirmation_question([a for a in task.gold[i:] if world.tools[a.tool].writes]))
    _, check = _graded(bank.tasks, [*task.gold[:i], refused, asks, *task.gold[i:]])
    assert check.passed, check.reason


def test_without_a_conversation_the_check_fails_and_says_why(bank):
    _, check = _graded(bank.tasks, gold_steps(bank.tasks.get(BANK_TASK), load_world("bank")), conversation=False)
    assert not check.passed and check.reason == "no conversation was given to grade the confirmation"


def test_a_do_nothing_agent_passes_the_check(bank):
    task = bank.tasks.get(BANK_TASK)
    assert next(c for c in task.rubric if isinstance(c, Confirmed)).noop_passes
    verdict, check = _graded(bank.tasks, [], answer="Nothing.")
    assert check.passed and not verdict.passed


# -- the conversation reaches the grader over every transport -----------------------------------


@pytest.mark.parametrize("transport", ["in-process", "http", pytest.param("stdio", marks=pytest.mark.system)])
def test_the_oracle_asks_and_passes_a_task_with_a_confirmed_check_over_every_transport(tmp_path, transport):
    extra = [] if transport == "in-process" else ["--transport", transport]
    result = CliRunner().invoke(
        main, ["run", "bank", "--agent", "oracle", "--tasks", BANK_TASK, "--out", str(tmp_path), *extra]
    )
    assert result.exit_code == 0, result.output
    (t,) = lines(tmp_path)
    (check,) = [c for c in t.verdict["checks"] if c["type"] == "confirmed"]
    assert check["passed"], check["reason"]
    assert t.reward == 1.0
    assert [m.content for m in t.messages if m.role == "user"][1] == YES_REPLY


def test_a_conversation_that_does_not_show_the_write_fails(bank):
    task = bank.tasks.get(BANK_TASK)
    world = load_world("bank")
    episode = task_episode(world, task)
    try:
        said = run_solution(episode, task, gold_steps(task, world))
        words_only = [m for m in said if m["role"] == "user" or (m["role"] == "assistant" and m.get("content"))]
        verdict = Verifier(world, bank.tasks).grade(episode, task, task.oracle_answer(), conversation=words_only)
    finally:
        episode.close()
    (check,) = [c for c in verdict.checks if c.type == "confirmed"]
    assert not check.passed and "does not show" in check.reason


def test_a_write_whose_arguments_the_world_filled_with_defaults_is_found_in_the_conversation(retail):
    """The transcript records `items: [{item_id, quantity: None}]` where the agent sent `[{item_id}]`."""
    task = retail.tasks.get("return-one-item-to-card")
    if not any(isinstance(c, Confirmed) for c in task.rubric):
        task = task.model_copy(
            update={
                "rubric": [
                    *task.rubric,
                    Confirmed(type="confirmed", requirement="The customer agreed before the return.", noop_passes=True),
                ]
            }
        )
    world = load_world("retail")
    episode = task_episode(world, task)
    try:
        said = run_solution(episode, task, gold_steps(task, world))
        verdict = Verifier(world, retail.tasks).grade(episode, task, task.oracle_answer(), conversation=said)
    finally:
        episode.close()
    (check,) = [c for c in verdict.checks if c.type == "confirmed"]
    assert check.passed, check.reason


# -- the request says what will be done -----------------------------------------------------------

NEW_EMAIL, NEW_PHONE = "heather.alexander.home@outlook.com", "512-555-0187"  # BANK_TASK's change


def _graded_turns(bank_tasks, turns: list[tuple[str, str]] | list[dict], *, task: Task | None = None):
    """BANK_TASK's gold run, with the request for the go-ahead and its answer replaced by `turns`
    (messages, or (the agent's words, the user's reply) pairs), each reply as given (not the
    scripted user's), so the check alone decides."""
    task = task or bank_tasks.get(BANK_TASK)
    messages: list[dict] = []
    for t in turns:
        if isinstance(t, dict):
            messages.append(t)
        else:
            messages += [{"role": "assistant", "content": t[0]}, {"role": "user", "content": t[1]}]
    world = load_world("bank")
    episode = task_episode(world, task)
    try:
        said = run_solution(episode, task, gold_steps(task, world))
        at = next(i for i, m in enumerate(said) if m["role"] == "assistant" and m.get("content"))
        conversation = said[:at] + messages + said[at + 2 :]
        verdict = Verifier(world, bank_tasks).grade(episode, task, task.oracle_answer(), conversation=conversation)
    finally:
        episode.close()
    (check,) = [c for c in verdict.checks if c.type == "confirmed"]
    return check


@pytest.mark.parametrize(
    "words",
    [
        f"I will change your email to {NEW_EMAIL} and your phone to {NEW_PHONE}. Shall I go ahead?",
        f"Your new phone number will be {NEW_PHONE}. Is that correct?",  # one value of the change is enough
        f"To confirm: update the email to {NEW_EMAIL.upper()}. Please reply yes or no.",  # case does not matter
        "I'll update the contact details of customer cus_9801097 as you asked. Shall I go ahead?",  # the record
    ],
)
def test_a_request_that_names_the_change_passes(bank, words):
    check = _graded_turns(bank.tasks, [(words, YES_REPLY)])
    assert check.passed, check.reason


def test_the_change_may_be_named_in_an_earlier_request_the_user_answered_with_a_question(bank):
    turns = [
        (f"I will change your email to {NEW_EMAIL}. Shall I go ahead?", "Will I get a confirmation email?"),
        ("Yes, one goes to the new address. Shall I go ahead?", YES_REPLY),
    ]
    assert _graded_turns(bank.tasks, turns).passed
    refused = [(turns[0][0], "No, wait."), *turns[1:]]  # the user refused the request that named it
    assert not _graded_turns(bank.tasks, refused).passed


def test_the_change_may_be_named_in_an_earlier_message_of_the_same_turn(bank):
    turn = [
        {"role": "assistant", "content": f"Here is the change: your email becomes {NEW_EMAIL}."},
        {"role": "assistant", "content": "Shall I go ahead?"},
        {"role": "user", "content": YES_REPLY},
    ]
    check = _graded_turns(bank.tasks, turn)
    assert check.passed, check.reason


@pytest.mark.parametrize(
    "turns",
    [
        [("Shall I go ahead?", YES_REPLY)],  # a blind yes
        [("I have everything I need. Do you want me to proceed? (yes/no)", YES_REPLY)],
        [("I will change your email to someone.else@example.com. Shall I go ahead?", YES_REPLY)],  # another change
        [("Shall I go ahead? " + " ".join(f"{n:04d}" for n in range(1000, 1100)) + f" {NEW_PHONE}", YES_REPLY)],
        # the change named a turn earlier, then a bare request after the user spoke again
        [
            (f"I can set your email to {NEW_EMAIL}.", "Will I get a confirmation email?"),
            ("Shall I go ahead?", YES_REPLY),
        ],
    ],
    ids=["bare", "vague", "another-change", "stuffed", "named-a-turn-earlier"],
)
def test_a_request_that_does_not_name_the_change_fails(bank, turns):
    check = _graded_turns(bank.tasks, turns)
    assert not check.passed and "without saying what it would do" in check.reason, check.reason


def test_a_task_can_accept_a_bare_request(bank):
    task = bank.tasks.get(BANK_TASK)
    rubric = [c.model_copy(update={"describe": False}) if isinstance(c, Confirmed) else c for c in task.rubric]
    check = _graded_turns(
        bank.tasks, [("Shall I go ahead?", YES_REPLY)], task=task.model_copy(update={"rubric": rubric})
    )
    assert check.passed, check.reason


def _row(op: str, key: str, before: dict | None, after: dict | None) -> Change:
    return Change(1, "t", op, json.dumps([key]), before, after)


def test_what_names_a_change():
    from mcpsim.grading._described import names_the_change

    order = {"order_id": "#W0006911", "reason": "no longer needed"}
    cancelled = [
        _row(
            "update",
            "#W0006911",
            {"status": "pending", "refund_cents": 0, "customer_id": "cus_1", "updated_at": "2026-05-14T10:00:00"},
            {"status": "cancelled", "refund_cents": 3998, "customer_id": "cus_1", "updated_at": "2026-05-15T09:00:00"},
        )
    ]
    booking = {"user_id": "u_1", "flights": [{"date": "2026-05-28", "time": "13:20"}], "cabin": "economy"}
    booked = [_row("insert", "R1", None, {"id": "R1", "user_id": "u_1", "first_name": "Jennifer", "quantity": 1})]
    accepted = [
        ("Cancel W0006911? (yes/no)", order, cancelled),  # the record's key, without the '#'
        ("I'll cancel it since it is no longer needed. OK to proceed?", order, cancelled),  # the agent's reason
        ("You get $39.98 back. Shall I?", order, cancelled),  # a changed money column in cents, in dollars
        ("No problem - I'll cancel order #W0006911. Shall I go ahead?", order, cancelled),  # no negation read
        ("Shall I move $1,000.00?", {"amount": 1000}, []),
        ("Your new number: (512) 555-0187. Correct?", {"phone": "512-555-0187"}, []),
        ("Your new number is 512.555.0187. Correct?", {"phone": "+1 512 555 0187"}, []),
        ("Your new number is 5125550187. Correct?", {"phone": "512-555-0187"}, []),
        ("The 1:20 PM flight on May 28. Shall I book it?", booking, booked),
        (
            "Swap your Yellow jacket?",
            {"order_id": "#W1"},
            [_row("update", "#W1", {"items": "[]"}, {"items": '[{"color": "Yellow"}]'})],
        ),
        (
            "Your card ending 8522?",
            {"card_id": "card_1"},
            [_row("update", "card_1", {"last4": "8522", "status": "active"}, {"last4": "8522", "status": "frozen"})],
        ),
    ]
    owners = ["cus_1", "u_1"]  # what the identity lookup answered with
    for request, arguments, changes in accepted:
        assert names_the_change(request, arguments, changes, today="2026-05-15", owners=owners), request
    customer = [_row("update", "cus_1", {"name": "Heather", "phone": "1"}, {"name": "Heather", "phone": "2"})]
    refused = [
        ("Shall I go ahead with the pending one?", order, cancelled),  # a lower-case state
        ("Thanks, Heather. Shall I go ahead?", {"customer_id": "cus_1", "email": "a@b.c"}, customer),  # unchanged words
        ("Shall I go ahead on your account cus_1?", {"customer_id": "cus_1", **order}, cancelled),  # the owner's id
        ("Today is May 15. Shall I go ahead?", order, cancelled),  # the day of the call (updated_at)
        ("Fee: $0, $1. Shall I go ahead?", {"order_id": "#W1", "quantity": 1}, cancelled),  # a count, a zero
        ("Thanks, Jennifer. Shall I go ahead?", booking, booked),  # the passenger is the user
        ("Economy it is. Shall I go ahead?", booking, booked),  # one word the agent sent
        ("Refunds take 5 to 10 business days. Shall I go ahead?", {"amount": 10, "order_id": "#W1"}, []),
        ("Shall I change 2 of them?", {"quantity": 2, "order_id": "#W1"}, []),  # a count names nothing
        ('Shall I go ahead? {"order_id": "#W0006911", "status": "pending"}', order, cancelled),  # pasted JSON
        ("Shall I go ahead? {'order_id': '#W0006911'}", order, cancelled),  # a pasted Python dict
        ("Shall I go ahead? " + "W0006911 " * 500, order, cancelled),  # far too long for a request
        ("Is that right?", {"order_id": "#W1"}, [_row("update", "#W1", {"side": "Left"}, {"side": "Right"})]),
    ]
    for request, arguments, changes in refused:
        assert not names_the_change(request, arguments, changes, today="2026-05-15", owners=owners), request
    account = "Shall I go ahead on your account cus_1?"  # the owner's id names the record it keys
    assert names_the_change(account, {"customer_id": "cus_1"}, customer, owners=owners)
    stuffed = "Shall I go ahead with #W0006911? " + " ".join(f"{n:04d}" for n in range(1000, 1010))
    assert not names_the_change(stuffed, order, cancelled)
    assert names_the_change(stuffed, order, cancelled, seen=[list(range(1000, 1010))])  # numbers the episode showed
    assert names_the_change("Shall I go ahead?", {"confirm": True}, []) is None  # nothing to name: not required
    assert names_the_change("Shall I?", {"n": 10**400}, []) is None  # a huge number is no crash


def test_a_long_request_is_refused_before_it_is_read(monkeypatch):
    """The token pattern is anchored, and a request past the limit is refused before the answer
    parser reads it (a 100,000-character request took minutes)."""
    from mcpsim.grading import _described as described

    assert described._TOKEN.findall("a" * 100_000 + " w0006911") == ["w0006911"]
    calls: list[str] = []
    real = described.parse
    monkeypatch.setattr(described, "parse", lambda text: calls.append(text) or real(text))
    assert described.names_the_change("1" * 100_000, {"order_id": "#W0006911", "body": "x" * 9000}, []) is False
    assert calls and all(len(c) <= described.PARSED_VALUE_LIMIT for c in calls)  # neither it nor a long value


def test_a_replayed_solution_hears_what_a_live_run_hears(retail):
    """`run_solution` (how `mcpsim check` replays the gold, alternatives and near misses) answers a
    question with the scripted user's next turn, as a live run does, not with a yes; and a step
    after a question the user no longer answers is one a live run never reaches."""
    from mcpsim.tasks._scenario import GoldActionError

    task = retail.tasks.get(CANCEL).model_copy(update={"user": UserSpec(turns=["It's the order with the lamp."])})
    world = load_world("retail")
    episode = task_episode(world, task)
    try:
        asked = run_solution(episode, task, [Say(say="Which order do you mean?"), *task.gold])
        assert asked[2] == {"role": "user", "content": "It's the order with the lamp."}
    finally:
        episode.close()
    episode = task_episode(world, task)
    try:
        with pytest.raises(GoldActionError, match="gets no reply"):
            run_solution(episode, task, [Say(say="Which order?"), Say(say="And which item?"), *task.gold])
    finally:
        episode.close()
