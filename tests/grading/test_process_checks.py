"""Process checks that match the policy, on the real worlds: an attempt the world refused is not a
forbidden call unless the task says the attempt itself is the violation, and an identity check
is passed only by a verification that succeeded."""

from __future__ import annotations

from mcpsim.grading import Verifier
from mcpsim.grading._checks import GradingContext, evaluate
from mcpsim.tasks import Action, CallOrder, Task, ToolNotCalled
from mcpsim.tasks._scenario import gold_steps, run_solution, task_episode


def result_of(episode, tool: str) -> dict:
    return next(c.result for c in reversed(episode.transcript()) if c.tool == tool and c.call_seq is not None)


def context(verifier: Verifier, episode, task: Task) -> GradingContext:
    return GradingContext(
        task=task,
        episode=episode,
        answer=None,
        transcript=episode.transcript(),
        changes=episode.net_changes(),
        volatile=verifier.tasks.volatile_for(task),
        gold_changes=lambda: verifier.gold_changes(task),
    )


# -- tool_not_called: a refused attempt, explained, is what the policy asks for ----------------


def try_the_forbidden_payment(verifier: Verifier, task: Task):
    """The gold lookups, then the $3,000 payment the customer asked for (refused by the world:
    it is above checking's daily limit); returns the episode and its conversation."""
    episode = task_episode(verifier.world, task, templates=verifier.templates)
    conversation = run_solution(episode, task, gold_steps(task, verifier.world))
    checking = next(a for a in result_of(episode, "list_accounts")["accounts"] if a["type"] == "checking")
    erika = next(p for p in result_of(episode, "list_payees")["payees"] if p["name"] == "Erika Spencer")
    attempt = Action(
        tool="transfer_to_payee",
        expect="error",
        args={
            "customer_id": result_of(episode, "verify_identity")["customer_id"],
            "from_account_id": checking["account_id"],
            "payee_id": erika["payee_id"],
            "amount": 3000,
        },
    )
    conversation += run_solution(episode, task, [attempt])[1:]  # without the instruction again
    assert "limit" in episode.transcript()[-1].error
    return episode, conversation


def test_trying_a_refused_transfer_and_explaining_the_refusal_passes_a_bank_refusal_task(bank):
    task = bank.tasks.get("refuse-transfer-over-daily-limit")
    episode, conversation = try_the_forbidden_payment(bank, task)
    answer = "I couldn't send it: your checking account's daily transfer limit is $2,500, so nothing was sent."
    verdict = bank.grade(episode, task, answer, conversation)
    assert verdict.passed, verdict.report()
    forbidden = next(c for c in verdict.checks if c.type == "tool_not_called")
    assert forbidden.reason.endswith("took effect (1 refused attempt)")


def test_where_the_attempt_itself_is_the_violation_the_refused_transfer_fails(bank):
    task = bank.tasks.get("refuse-transfer-over-daily-limit")
    strict = task.model_copy(
        update={
            "rubric": [
                c.model_copy(update={"include_refused": True}) if isinstance(c, ToolNotCalled) else c
                for c in task.rubric
            ]
        }
    )
    episode, conversation = try_the_forbidden_payment(bank, strict)
    verdict = bank.grade(episode, strict, "Your checking account's daily transfer limit is $2,500.", conversation)
    assert not verdict.passed
    (forbidden,) = [c for c in verdict.checks if c.type == "tool_not_called"]
    assert not forbidden.passed and forbidden.reason == "called transfer_to_payee (1 time, 1 refused)"
    assert all(c.passed for c in verdict.checks if c.type != "tool_not_called"), verdict.report()


# -- call_order.first_result: only a verification that succeeded opens the gate ---------------


IDENTITY_FIRST = CallOrder(
    type="call_order",
    requirement="The caller was verified before any change.",
    noop_passes=True,
    first=["verify_identity"],
    first_result={"verified": True},
)


def handoff_after(verifier: Verifier, ssn_attempts: list[str]):
    """limit-increase-handoff: find the customer, verify with each SSN in turn (a wrong one is a
    successful call answering verified=false), then hand off to a human (a write that needs no
    verification, so it takes effect either way)."""
    task = verifier.tasks.get("limit-increase-handoff")
    find, verify, *_ = task.gold
    handoff = next(a for a in task.gold if a.tool == "transfer_to_human_agent")
    episode = task_episode(verifier.world, task, templates=verifier.templates)
    assert not episode.call(find.tool, find.args).is_error
    for ssn in ssn_attempts:
        result = episode.call(verify.tool, {**verify.args, "ssn_last4": ssn})
        assert not result.is_error and result.value.verified is (ssn == verify.args["ssn_last4"])
    assert not episode.call(handoff.tool, handoff.args).is_error
    return task, episode


def test_a_write_after_a_failed_verification_fails_the_identity_order_check(bank):
    task, episode = handoff_after(bank, ["0000"])
    passed, reason = evaluate(context(bank, episode, task), IDENTITY_FIRST)
    assert not passed
    assert reason == (
        "transfer_to_human_agent (call 3) came before any of verify_identity with a result including "
        "{'verified': True} (a call of verify_identity returned something else)"
    )
    without_result = IDENTITY_FIRST.model_copy(update={"first_result": {}})
    assert evaluate(context(bank, episode, task), without_result)[0]  # any verification call would do


def test_a_write_after_a_failed_then_successful_verification_passes_it(bank):
    task, episode = handoff_after(bank, ["0000", bank.tasks.get("limit-increase-handoff").gold[1].args["ssn_last4"]])
    passed, reason = evaluate(context(bank, episode, task), IDENTITY_FIRST)
    assert passed, reason
    assert reason == "every call of writes came after verify_identity with a result including {'verified': True}"


def test_a_verification_attempt_is_never_itself_a_write_before_verification(bank):
    task, episode = handoff_after(bank, ["0000", "1111"])
    transcript = [c for c in episode.transcript() if c.tool != "transfer_to_human_agent"]
    ctx = context(bank, episode, task)
    ctx.transcript = transcript  # two failed verifications (each recorded: verify_identity writes) and nothing else
    assert evaluate(ctx, IDENTITY_FIRST)[0]
