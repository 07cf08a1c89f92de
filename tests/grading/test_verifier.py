"""The verifier: every check type, the diff, and failing closed."""

from __future__ import annotations

import pytest

from mcpsim.engine import _store as store
from mcpsim.engine._episode import Episode
from mcpsim.grading import Verifier
from mcpsim.grading._answers import fact_stated
from mcpsim.grading._grader import GradingUnavailable
from mcpsim.tasks import Task
from mcpsim.tasks._scenario import TaskSetupError, oracle_answer, run_actions, task_episode
from tests.support.verifier_fixtures import ledger_tasks


@pytest.fixture
def tasks(ledger, templates):
    return ledger_tasks(ledger, templates)


@pytest.fixture
def verifier(ledger, tasks, templates):
    return Verifier(ledger, tasks, templates=templates)


def fresh(verifier, task_id: str) -> Episode:
    return task_episode(verifier.world, verifier.tasks.get(task_id), templates=verifier.templates)


def solved(verifier, task_id: str, upto: int | None = None) -> Episode:
    ep = fresh(verifier, task_id)
    run_actions(ep, verifier.tasks.get(task_id).gold[:upto])
    return ep


def by_type(verdict, kind: str):
    return [c for c in verdict.checks if c.type == kind]


def test_the_gold_solution_passes_strict_and_the_verdict_is_stamped(verifier):
    task = verifier.tasks.get("pay-and-open")
    verdict = verifier.grade(solved(verifier, task.id), task, oracle_answer(task))
    assert verdict.passed and verdict.reward == 1.0 and verdict.partial_reward == 1.0, verdict.report()
    assert verdict.world_version == verifier.world.version and verdict.failure is None
    assert {d.op for d in verdict.diff} == {"update", "insert"}
    assert any(d.column == "balance_cents" and d.after - d.before == 2000 for d in verdict.diff)


def test_a_do_nothing_agent_fails_strict_and_passes_exactly_the_checks_labelled_so(verifier):
    task = verifier.tasks.get("pay-and-open")
    verdict = verifier.grade(fresh(verifier, task.id), task, None)
    assert not verdict.passed and verdict.reward == 0.0
    assert [c.passed for c in verdict.checks[: len(task.rubric)]] == [c.noop_passes for c in task.rubric]
    assert verdict.partial_reward == 0.0  # what a do-nothing agent passes carries no weight (issue 28)
    assert verdict.diff == []


def test_gold_plus_an_unrelated_write_fails_strict_and_names_the_collateral_row(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = solved(verifier, task.id)
    ep.call("open_account", {"owner": "Mallory"})
    verdict = verifier.grade(ep, task, oracle_answer(task))
    assert not verdict.passed and 0 < verdict.partial_reward < 1
    (allowed,) = by_type(verdict, "allowed_changes")
    assert not allowed.passed and "collateral" in allowed.reason and "account" in allowed.reason
    (gold,) = by_type(verdict, "gold_state")
    assert not gold.passed and "new row(s) the gold solution does not create" in gold.reason
    assert any(d.op == "insert" and d.after["owner"] == "Mallory" for d in verdict.diff)


def test_half_the_gold_actions_fail_strict_with_a_partial_reward_between_0_and_1(verifier):
    task = verifier.tasks.get("pay-and-open")
    verdict = verifier.grade(solved(verifier, task.id, upto=2), task, oracle_answer(task))
    assert not verdict.passed and verdict.reward == 0.0 and 0 < verdict.partial_reward < 1
    failed = {c.type for c in verdict.checks if not c.passed}
    assert failed == {"row_exists", "gold_state"}


def test_a_refused_forbidden_call_fails_its_check_only_where_the_attempt_is_the_violation(verifier):
    task = verifier.tasks.get("refuse-overdraft")
    ep = solved(verifier, task.id)
    attempt = ep.call(
        "transfer",
        {
            "from_account": task.gold[0].args["account_id"],
            "to_account": task.gold[0].args["account_id"],
            "amount": 1_000_000,
        },
    )
    assert attempt.is_error  # refused by the world: state unchanged
    verdict = verifier.grade(ep, task, "Sorry, insufficient funds.")
    assert verdict.passed, verdict.report()  # tried, refused, explained: by default that is fine
    (forbidden,) = by_type(verdict, "tool_not_called")
    assert forbidden.reason == "no call of transfer took effect (1 refused attempt)"
    rubric = [c.model_copy(update={"include_refused": True}) if c.type == "tool_not_called" else c for c in task.rubric]
    verdict = verifier.grade(ep, task.model_copy(update={"rubric": rubric}), "Sorry, insufficient funds.")
    (forbidden,) = by_type(verdict, "tool_not_called")
    assert not forbidden.passed and forbidden.reason == "called transfer (1 time, 1 refused)" and not verdict.passed
    assert all(c.passed for c in verdict.checks if c.type != "tool_not_called")


def test_a_write_before_the_identity_lookup_fails_the_ordering_check(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = fresh(verifier, task.id)
    gold = task.gold
    run_actions(ep, [gold[1], gold[0], gold[2]])
    verdict = verifier.grade(ep, task, oracle_answer(task))
    (order,) = by_type(verdict, "call_order")
    assert not order.passed and "transfer" in order.reason and not verdict.passed
    assert by_type(verdict, "gold_state")[0].passed  # same final state, wrong order


def test_a_wrong_value_is_reported_with_expected_and_actual(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = fresh(verifier, task.id)
    g = task.gold
    run_actions(ep, [g[0], g[1].model_copy(update={"args": {**g[1].args, "amount": 25}}), g[2]])
    verdict = verifier.grade(ep, task, oracle_answer(task))
    (field,) = by_type(verdict, "field_equals")
    assert "balance_cents: expected 7000, got 7500" in field.reason
    (gold,) = by_type(verdict, "gold_state")
    assert "expected 7000, got 7500" in gold.reason


def test_volatile_columns_are_ignored_but_real_columns_are_not(verifier, ledger):
    task = verifier.tasks.get("pay-and-open")
    ep = fresh(verifier, task.id)
    ep.call("get_account", {"account_id": task.gold[0].args["account_id"]})  # an extra read shifts the clock
    run_actions(ep, task.gold)
    verdict = verifier.grade(ep, task, oracle_answer(task))
    assert verdict.passed, verdict.report()  # opened_at differs from gold's and is volatile


@pytest.mark.parametrize(
    ("fact", "answer", "stated"),
    [
        ({"number": 1234.5}, "You get $1,234.50 back.", True),
        ({"number": 20}, "Refunded 19.99", False),
        ({"number": 19.99, "tolerance": 0.01}, "Refunded 20.00 dollars.", True),
        ("shipped", "The order is unshipped.", False),
        ("shipped", "It has SHIPPED already!", True),
        ("order #W123", "Your order #w123 is late", True),
        ({"any": ["insufficient", "not enough"]}, "There is not  enough money.", True),
        ({"any": ["insufficient"]}, "sufficient funds", False),
    ],
)
def test_answer_facts_are_matched_on_normalised_text_and_numbers(fact, answer, stated):
    from mcpsim.tasks import AnyFact, NumberFact

    parsed = fact if isinstance(fact, str) else NumberFact(**fact) if "number" in fact else AnyFact(**fact)
    assert fact_stated(parsed, answer) is stated


def test_no_answer_fails_the_answer_check(verifier):
    task = verifier.tasks.get("refuse-overdraft")
    verdict = verifier.grade(solved(verifier, task.id), task, None)
    (answer,) = by_type(verdict, "answer_facts")
    assert not answer.passed and "no final answer" in answer.reason


def test_grading_ends_the_episode_so_the_graded_state_is_frozen(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = solved(verifier, task.id)
    verifier.grade(ep, task, oracle_answer(task))
    before = ep.state_hash()
    assert "ended" in ep.call("open_account", {"owner": "late"}).error
    assert ep.state_hash() == before


# -- failing closed -----------------------------------------------------------------------------


def test_an_empty_rubric_scores_zero_with_its_reason(verifier):
    task = verifier.tasks.get("pay-and-open")
    empty = Task.model_construct(**{**dict(task), "rubric": []})  # bypasses validation on purpose
    verdict = verifier.grade(solved(verifier, task.id), empty, oracle_answer(task))
    assert verdict.reward == 0 and verdict.partial_reward == 0 and "rubric is empty" in verdict.failure


def test_a_verifier_error_scores_zero_with_its_reason(verifier):
    verdict = verifier.grade(fresh(verifier, "broken-check"), "broken-check")
    assert verdict.reward == 0 and "verifier error: ZeroDivisionError" in verdict.failure


def test_a_stalled_grading_is_an_infrastructure_error_never_a_reward(ledger, tasks, templates):
    """Before, a grading past a 30 s wall-clock deadline scored 0: on a loaded machine correct
    episodes failed. Now a stall raises GradingUnavailable, which callers retry."""
    verifier = Verifier(ledger, tasks, templates=templates, stall_timeout=0.2)
    episode = fresh(verifier, "slow-check")
    with pytest.raises(GradingUnavailable, match="no progress for 0.2 s"):
        verifier.grade(episode, "slow-check")
    assert episode.verdict is None  # nothing was recorded as a verdict
    patient = Verifier(ledger, tasks, templates=templates)
    assert patient.grade(fresh(patient, "slow-check"), "slow-check").passed


def test_grading_is_bounded_by_work_so_the_verdict_does_not_depend_on_load(ledger, tasks, templates):
    """The SQLite step budget is counted in VM instructions: the same episode exceeds it (or
    not) however busy the machine is, and the same verdict comes back every time."""
    tight = Verifier(ledger, tasks, templates=templates, sqlite_steps=5_000_000)
    verdicts = [tight.grade(fresh(tight, "heavy-check"), "heavy-check") for _ in range(2)]
    for verdict in verdicts:
        assert verdict.reward == 0 and "work budget: more than 5,000,000 SQLite steps" in verdict.failure
    roomy = Verifier(ledger, tasks, templates=templates)
    assert roomy.grade(fresh(roomy, "heavy-check"), "heavy-check").passed


def test_an_episode_flagged_for_a_tool_bug_scores_zero_even_if_the_checks_pass(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = solved(verifier, task.id)
    ep.call("close_account_buggy", {"account_id": task.gold[0].args["account_id"]})
    verdict = verifier.grade(ep, task, oracle_answer(task))
    assert all(c.passed for c in verdict.checks if c.type != "tool_not_called")  # close_* is also forbidden
    assert verdict.reward == 0 and verdict.partial_reward == 0 and "simulator bug" in verdict.failure


def test_a_world_version_mismatch_scores_zero(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = solved(verifier, task.id)
    store.write_meta(ep.conn, {"version": "0000000000000000"})
    stale = Episode.restore(verifier.world, ep.snapshot())
    verdict = verifier.grade(stale, task, oracle_answer(task))
    assert verdict.reward == 0 and "world version mismatch" in verdict.failure


def test_an_episode_of_another_task_or_of_no_task_scores_zero(verifier, ledger, templates):
    task = verifier.tasks.get("refuse-overdraft")
    other = solved(verifier, "pay-and-open")
    assert "created for task 'pay-and-open'" in verifier.grade(other, task, "insufficient").failure
    plain = Episode.create(ledger, seed=1, scale="small", templates=templates)
    assert "created for task None" in verifier.grade(plain, task, "insufficient").failure


def test_a_gold_solution_that_does_not_replay_fails_closed(verifier):
    task = verifier.tasks.get("pay-and-open")
    broken = task.model_copy(
        update={
            "id": "pay-and-open",
            "gold": [
                task.gold[0].model_copy(
                    update={"tool": "transfer", "args": {"from_account": "x", "to_account": "y", "amount": 1}}
                )
            ],
        }
    )
    fresh_verifier = Verifier(verifier.world, verifier.tasks, templates=verifier.templates)
    verdict = fresh_verifier.grade(solved(verifier, task.id), broken, oracle_answer(task))
    assert verdict.reward == 0 and "gold action 1 (transfer) failed" in verdict.failure


# -- setup ----------------------------------------------------------------------------------------


def test_setup_shapes_the_initial_state_and_is_not_counted_as_the_agents_changes(verifier):
    task = verifier.tasks.get("pay-and-open")
    ep = fresh(verifier, task.id)
    b = task.gold[1].args["to_account"]
    assert ep.select("account", {"id": b})[0]["balance_cents"] == 5000
    assert ep.changes() == [] and ep.transcript() == [] and ep.task_id == task.id


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"update": "account", "where": {"id": "nope"}, "set": {"owner": "x"}}, "no row of account matches"),
        ({"update": "account", "where": {}, "set": {"colour": "x"}}, "no columns ['colour']"),
        ({"update": "ghosts", "where": {}, "set": {"a": 1}}, "no table 'ghosts'"),
        ({"insert": "account", "row": {"id": "x"}}, "NOT NULL"),
        ({"delete": "account", "where": {"owner": {"regex": "x"}}}, "unknown operator 'regex'"),
        ({"call": "transfer", "args": {"from_account": "a"}}, "transfer failed: Invalid arguments"),
    ],
)
def test_a_broken_setup_step_is_a_clear_error(ledger, templates, step, message):
    task = Task.model_validate(
        {
            "id": f"bad-{abs(hash(str(step)))}",
            "instruction": "a broken task, on purpose",
            "seed": 1,
            "scale": "small",
            "setup": [step],
            "gold": [],
            "rubric": [
                {
                    "type": "row_count",
                    "requirement": "three accounts remain",
                    "table": "account",
                    "equals": 3,
                    "noop_passes": True,
                }
            ],
            "difficulty": "easy",
            "split": "dev",
        }
    )
    with pytest.raises(TaskSetupError, match=message.replace("[", r"\[").replace("]", r"\]")):
        task_episode(ledger, task, templates=templates)


def test_independent_inserts_in_another_order_than_gold_still_match(ledger, templates):
    from mcpsim.tasks import TaskFile, TaskSet

    task_file = TaskFile.model_validate(
        {
            "world": "ledger",
            "canary": "MCPSIM-CANARY ledger order-test-0001",
            "volatile": ["*.opened_at"],
            "tasks": [
                {
                    "id": "open-two",
                    "instruction": "Open accounts for Yan and for Zoe.",
                    "seed": 1,
                    "scale": "small",
                    "gold": [
                        {"tool": "open_account", "args": {"owner": "Yan"}},
                        {"tool": "open_account", "args": {"owner": "Zoe"}},
                    ],
                    "rubric": [
                        {"type": "gold_state", "requirement": "Both accounts exist as in gold", "noop_passes": False},
                        {"type": "allowed_changes", "requirement": "Nothing else was created", "noop_passes": True},
                    ],
                    "difficulty": "easy",
                    "split": "train",
                }
            ],
        }
    )
    verifier = Verifier(ledger, TaskSet(world="ledger", files=[task_file]), templates=templates)
    task = verifier.tasks.get("open-two")

    def graded(owners: list[str]):
        ep = task_episode(ledger, task, templates=templates)
        for owner in owners:
            assert not ep.call("open_account", {"owner": owner}).is_error
        return verifier.grade(ep, task)

    swapped = graded(["Zoe", "Yan"])  # the ids each row gets are swapped relative to gold
    assert swapped.passed, swapped.report()
    wrong = graded(["Zoe", "Xavier"])
    assert not wrong.passed
    gold, allowed = wrong.checks[:2]  # then the derived checks (issue 28)
    assert "new row(s) the gold solution does not create" in gold.reason and "Xavier" in gold.reason
    assert "new row(s) missing" in gold.reason and "Yan" in gold.reason
    assert not allowed.passed and "Xavier" in allowed.reason
    extra = graded(["Yan", "Zoe", "Mallory"])
    assert not extra.passed and "Mallory" in extra.checks[1].reason


def test_ordering_can_cover_reads_and_forbidden_calls_can_ignore_refusals(verifier):
    from mcpsim.grading._checks import GradingContext, evaluate
    from mcpsim.tasks import CallOrder, ToolNotCalled

    task = verifier.tasks.get("pay-and-open")
    ep = fresh(verifier, task.id)
    ep.call("list_accounts")  # a read before the identity lookup
    ep.call("transfer", {"from_account": "nope", "to_account": "nope2", "amount": 1})  # refused
    run_actions(ep, task.gold)
    ctx = GradingContext(
        task=task, episode=ep, answer=None, transcript=ep.transcript(), changes={}, volatile=[], gold_changes=dict
    )
    reads_first = CallOrder(
        type="call_order",
        requirement="No read before the lookup",
        noop_passes=True,
        first=["get_account"],
        then="reads",
    )
    assert evaluate(ctx, reads_first) == (False, "list_accounts (call 1) came before any of get_account")
    writes_first = CallOrder(
        type="call_order", requirement="No write before the lookup", noop_passes=True, first=["get_account"]
    )
    assert evaluate(ctx, writes_first)[0]
    lenient = ToolNotCalled(
        type="tool_not_called", requirement="No transfer went through", noop_passes=True, tools=["transfer"]
    )
    strict = lenient.model_copy(update={"include_refused": True})  # the attempt itself is the violation
    assert not evaluate(ctx, strict)[0] and not evaluate(ctx, lenient)[0]  # the gold transfer went through
    only_refused = fresh(verifier, task.id)
    only_refused.call("transfer", {"from_account": "nope", "to_account": "nope2", "amount": 1})
    ctx.transcript = only_refused.transcript()
    assert not evaluate(ctx, strict)[0]  # trying counts where the task says so
    assert evaluate(ctx, lenient) == (True, "no call of transfer took effect (1 refused attempt)")  # the default


def test_every_check_type_of_the_rubric_has_one_evaluator():
    from typing import get_args

    from mcpsim.grading._checks import EVALUATORS
    from mcpsim.tasks._rubric import Check

    union = get_args(Check)[0]
    types = {get_args(model.model_fields["type"].annotation)[0] for model in get_args(union)}
    assert types == set(EVALUATORS)
