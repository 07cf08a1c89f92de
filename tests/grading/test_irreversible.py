"""Irreversible effects count: a message sent and then deleted, a file shared and then unshared,
an invitation declined and then accepted all leave the gold solution's final rows, yet the world
saw them. Grading compares what irreversible calls wrote, agent against gold; the order of the
writes and a retry of a refused call do not matter (`mcpsim.grading._effects`)."""

from __future__ import annotations

from typing import Any

from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import load_profile
from mcpsim.engine._store import Change, NetChange
from mcpsim.grading import Verifier
from mcpsim.grading._diff import compare_with_gold
from mcpsim.grading._effects import EpisodeChanges, Write, compare_irreversible, irreversible_writes
from mcpsim.tasks import Action, Task
from mcpsim.tasks._scenario import gold_steps, oracle_answer, run_solution, task_episode
from tests.conftest import lunch_reply
from tests.support.verifier_fixtures import gold_state_reason, play


def ignored(verifier: Verifier, task: Task) -> list[str]:
    return [*verifier.tasks.volatile_for(task), *verifier.tasks.free_text_for(task)]


def new_thread(episode: Episode) -> str:
    sent = next(c for c in reversed(episode.transcript()) if c.tool == "send_mail" and c.call_seq is not None)
    return sent.result["thread_id"]


# -- the finding: reverted irreversible actions were invisible ---------------------------------------


def test_a_message_sent_then_trashed_and_deleted_fails_though_the_final_rows_equal_the_golds(workspace):
    task = workspace.tasks.get("mail-reply-lunch")
    extra = Action(
        tool="send_mail",
        args={"to": ["sam.whitaker@gmail.com"], "subject": "Lunch", "body": "Actually, I can't make it on Thursday."},
    )
    episode = task_episode(workspace.world, task, templates=workspace.templates)
    conversation = run_solution(episode, task, [*gold_steps(task, workspace.world), extra])
    thread = new_thread(episode)
    conversation += run_solution(
        episode,
        task,
        [
            Action(tool="trash_thread", args={"thread_id": thread}),
            Action(tool="empty_trash", args={"thread_ids": [thread]}),
        ],
    )[1:]
    # The final rows are the gold solution's: net changes alone cannot see the message.
    assert compare_with_gold(episode.net_changes(), workspace.gold_changes(task), ignored(workspace, task)) == []
    verdict = workspace.grade(episode, task, oracle_answer(task), conversation)
    assert not verdict.passed
    reason = gold_state_reason(verdict)
    assert "messages <new message>: written by send_mail" in reason and "later deleted" in reason, reason
    assert "send_mail is irreversible" in reason


def test_a_file_shared_then_unshared_fails_and_so_does_the_default_allowed_changes(workspace):
    task = workspace.tasks.get("files-revoke-auditor")
    steps = [
        *gold_steps(task, workspace.world),
        Action(
            tool="share_file",
            args={"file_id": "fil_0522802", "emails": ["nadia.rahman@acmelogistics.com"], "role": "viewer"},
        ),
        Action(tool="revoke_access", args={"file_id": "fil_0522802", "email": "nadia.rahman@acmelogistics.com"}),
    ]
    verdict, _ = play(workspace, task, steps)
    assert not verdict.passed
    assert "file_permissions" in gold_state_reason(verdict) and "written by share_file" in gold_state_reason(verdict)
    collateral = next(c for c in verdict.checks if c.type == "allowed_changes")
    assert not collateral.passed and "share_file is irreversible" in collateral.reason


def test_declining_then_accepting_an_invitation_is_not_accepting_it_once(workspace):
    task = workspace.tasks.get("cal-accept-allhands")
    gold = gold_steps(task, workspace.world)
    decline = Action(tool="respond_to_invitation", args={"event_id": "evt_54620300", "response": "declined"})
    verdict, _ = play(workspace, task, [*gold[:-1], decline, gold[-1]])
    assert not verdict.passed
    assert (
        "response: changed by 2 irreversible call(s) (respond_to_invitation, respond_to_invitation), the gold "
        "solution's by 1" in gold_state_reason(verdict)
    )


def test_the_writes_of_irreversible_calls_are_per_call_images(workspace):
    task = workspace.tasks.get("mail-reply-lunch")
    episode = task_episode(workspace.world, task, templates=workspace.templates)
    run_solution(episode, task, gold_steps(task, workspace.world))
    writes = irreversible_writes(episode)
    assert {tool for tool, _ in writes} == {"reply_to_thread"}
    message = next(w for _, w in writes if w.table == "messages")
    assert message.op == "insert" and message.after is not None and "12:30" in message.after["body"]
    assert all(w.call_seq == message.call_seq for _, w in writes)


# -- what still passes: another order, a retry, the gold itself ---------------------------------------


def test_the_gold_irreversible_writes_in_another_order_pass(bank):
    task = bank.tasks.get("month-start-chores")
    steps = gold_steps(task, bank.world)
    payments = [i for i, s in enumerate(steps) if isinstance(s, Action) and s.tool == "transfer_to_payee"]
    assert len(payments) == 2
    first, second = payments
    steps[first], steps[second] = steps[second], steps[first]
    verdict, _ = play(bank, task, steps)
    assert verdict.passed, verdict.report()


def test_an_irreversible_call_the_world_refused_then_retried_passes(workspace):
    task, steps, reply = lunch_reply(workspace)
    refused = Action(tool="reply_to_thread", args={**reply.args, "thread_id": "thr_00000000"}, expect="error")
    verdict, episode = play(workspace, task, [*steps[:-1], refused, reply])
    assert verdict.passed, verdict.report()
    assert [c.tool for c in episode.transcript() if c.call_seq is None] == ["reply_to_thread"]


def test_a_retry_after_an_injected_transient_fault_passes(bank):
    task = bank.tasks.get("pay-saved-payee-with-memo")
    retry = next(s for s in task.alternatives if "transient" in s.name)
    episode = task_episode(bank.world, task, templates=bank.templates, faults=load_profile(retry.faults))
    conversation = run_solution(episode, task, retry.steps if retry.steps is not None else gold_steps(task, bank.world))
    verdict = bank.grade(episode, task, oracle_answer(task), conversation)
    assert verdict.passed, verdict.report()
    assert any(c.fault for c in episode.transcript())


# -- the comparison itself, on hand-made writes ------------------------------------------------------


def changes(*writes: Write, final: dict[tuple[str, str], NetChange] | None = None) -> EpisodeChanges:
    return EpisodeChanges(final or {}, {}, list(writes))


def update(seq: int, key: str, before: int, after: int, tool: str = "pay") -> Write:
    row: dict[str, Any] = {"id": key, "balance": before}
    return tool, Change(seq, "accounts", "update", f'["{key}"]', row, {**row, "balance": after})


def test_updates_count_per_column_not_by_intermediate_value():
    gold = changes(update(1, "a", 1000, 900), update(2, "a", 900, 850))
    swapped = changes(update(1, "a", 1000, 950), update(2, "a", 950, 850))
    assert compare_irreversible(swapped, gold, []) == ([], [])
    once = changes(update(1, "a", 1000, 850))
    extra, missing = compare_irreversible(once, gold, [])
    assert extra == [] and missing == [
        "accounts a balance: changed by 1 irreversible call(s), the gold solution's by 2 (pay, pay)"
    ]
    elsewhere = changes(update(1, "a", 1000, 900), update(2, "a", 900, 800))
    extra, _ = compare_irreversible(elsewhere, gold, [])
    assert extra == ["accounts a balance: irreversible calls last set it to 800, the gold solution's to 850"]


def test_volatile_columns_of_irreversible_writes_are_ignored_and_deletes_count():
    sent = "send", Change(3, "messages", "insert", '["m1"]', None, {"id": "m1", "body": "hi", "sent_at": "t1"})
    later = "send", Change(5, "messages", "insert", '["m2"]', None, {"id": "m1", "body": "hi", "sent_at": "t2"})
    assert compare_irreversible(changes(later), changes(sent), ["messages.sent_at"]) == ([], [])
    assert compare_irreversible(changes(later), changes(sent), [])[0]  # the timestamps differ
    gone = "shred", Change(4, "files", "delete", '["f1"]', {"id": "f1"}, None)
    extra, missing = compare_irreversible(changes(gone), changes(), [])
    assert (
        extra == ["files f1: deleted by shred (call 4); shred is irreversible and the gold solution does not delete it"]
        and missing == []
    )
    _, missing = compare_irreversible(changes(), changes(sent), ["messages.sent_at"])
    assert missing == ["messages: 1 row(s) the gold solution's send writes, never written here: {body='hi', id='m1'}"]


def test_updates_of_rows_the_episode_created_match_in_any_order():
    """New rows share one renamed key (`<new account>`), so each row's last value is compared as a
    multiset: which new row was updated first does not matter, what each ended at does."""
    new = {"n1": "account", "n2": "account"}
    gold = EpisodeChanges({}, new, [update(1, "n1", 0, 10), update(2, "n2", 0, 20)])
    other_order = EpisodeChanges({}, new, [update(1, "n2", 0, 20), update(2, "n1", 0, 10)])
    assert compare_irreversible(other_order, gold, []) == ([], [])
    wrong = EpisodeChanges({}, new, [update(1, "n2", 0, 30), update(2, "n1", 0, 10)])
    extra, _ = compare_irreversible(wrong, gold, [])
    assert extra == [
        "accounts <new account> balance: irreversible calls last set it to [10, 30], the gold solution's to [10, 20]"
    ]
