"""Two cheating baselines of `mcpsim check` for what a final state cannot show:

- `repeated_effect`: the gold solution with each of its irreversible calls made again right after
  it (the same call: an invitation answered twice, a payment sent twice), and, where the call has
  a choice argument (an enum or a flag), undone and redone (declined, then accepted again; the
  cabin changed back, then again). Each extra call is asked for first where the rubric wants a
  go-ahead, as the gold solution's are, so only the effect itself can fail it. The final rows
  often equal the gold solution's; grading must still fail it (`mcpsim.grading._effects`).
- `zero_call_guess`: no call at all, and a final answer that guesses right: the oracle's answer
  (an agent trying every candidate value, or the most common one, is right on some task; the
  right value stands for all of them). A task that passes it has no check that the answer was
  looked up.

Each returns an `EffectCheat` (applied, passed, detail), which `_baselines` registers."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from mcpsim.audit._conversation import call_messages
from mcpsim.audit._verdicts import failed_checks
from mcpsim.engine import Episode
from mcpsim.grading import Verifier
from mcpsim.tasks import (
    Action,
    Confirmed,
    Say,
    Step,
    Task,
    confirmation_question,
    gold_steps,
    oracle_answer,
    result_text,
    scripted_reply,
    task_episode,
)
from mcpsim.world import World

__all__ = ["EffectCheat", "repeated_effect", "zero_call_guess"]

MAX_VARIANTS = 6  # repeats and undo-redos tried per task (each is one gold replay and one grading)


class EffectCheat(NamedTuple):
    applied: bool
    passed: bool = False
    detail: str = ""


def zero_call_guess(world: World, verifier: Verifier, task: Task) -> EffectCheat:
    """No call, and the right answer guessed (see the module's doc)."""
    if not any(a.expect == "ok" for a in task.gold):
        return EffectCheat(False, detail="the gold solution makes no call: the instruction alone may settle it")
    answer = oracle_answer(task)
    episode = task_episode(world, task, templates=verifier.templates)
    try:
        conversation = [{"role": "user", "content": task.instruction}, {"role": "assistant", "content": answer}]
        verdict = verifier.grade(episode, task, answer, conversation)
    finally:
        episode.close()
    what = f"no call, answer: {answer[:160]!r}"
    return EffectCheat(
        True, verdict.passed, what if verdict.passed else f"{what}; fails: {failed_checks(verdict)[:300]}"
    )


def _flipped(world: World, action: Action) -> Action | None:
    """The action with its first choice argument (an enum or a flag) set to another value: the
    call that undoes it, for tools whose choice is what they set (a response, a cabin, a switch)."""
    properties = world.tools[action.tool].input_schema().get("properties", {})
    for name, value in action.args.items():
        schema = properties.get(name, {})
        choices = schema.get("enum") or next((s.get("enum") for s in schema.get("anyOf", []) if s.get("enum")), None)
        if isinstance(value, bool) or schema.get("type") == "boolean":
            return action.model_copy(update={"args": {**action.args, name: not value}})
        others = [c for c in choices or [] if c != value]
        if others:
            return action.model_copy(update={"args": {**action.args, name: others[0]}})
    return None


def _variants(world: World, task: Task) -> list[tuple[str, list[Step], set[int]]]:
    """The gold steps with an irreversible call repeated (or undone and redone) right after it:
    (what, the steps, the positions of the extra calls)."""
    steps = gold_steps(task, world)
    confirm = any(isinstance(c, Confirmed) for c in task.rubric)
    variants: list[tuple[str, list[Step], set[int]]] = []
    for i, step in enumerate(steps):
        if not isinstance(step, Action) or step.expect != "ok" or not world.tools[step.tool].irreversible:
            continue
        flipped = _flipped(world, step)
        for what, extra in [
            (f"{step.tool} made twice", [step]),
            *(
                [(f"{step.tool} undone ({json.dumps(flipped.args)[:80]}) and redone", [flipped, step])]
                if flipped
                else []
            ),
        ]:
            added: list[Step] = []
            for action in extra:
                added += [Say(say=confirmation_question([action]))] if confirm else []
                added.append(action)
            new = [*steps[: i + 1], *added, *steps[i + 1 :]]
            variants.append((what, new, {i + 1 + k for k, s in enumerate(added) if isinstance(s, Action)}))
    return variants[:MAX_VARIANTS]


def _play(episode: Episode, task: Task, steps: list[Step], extra: set[int]) -> tuple[list[dict[str, Any]], int]:
    """The steps on `episode`, whatever the calls return; the conversation and how many of the
    extra calls took effect."""
    conversation: list[dict[str, Any]] = [{"role": "user", "content": task.instruction}]
    took = 0
    for number, step in enumerate(steps):
        if isinstance(step, Say):
            conversation.append({"role": "assistant", "content": step.say})
            conversation.append({"role": "user", "content": scripted_reply(task, conversation) or "OK."})
            continue
        result = episode.call(step.tool, step.args)
        conversation += call_messages(step.tool, step.args, f"call_{number}", result_text(result))
        took += number in extra and not result.is_error
    return conversation, took


def repeated_effect(world: World, verifier: Verifier, task: Task) -> EffectCheat:
    """The gold solution with an irreversible call repeated, or undone and redone (see the
    module's doc); it passes if any such variant passes."""
    variants = _variants(world, task)
    if not variants:
        return EffectCheat(False, detail="the gold solution makes no irreversible call")
    tried: list[str] = []
    for what, steps, extra in variants:
        episode = task_episode(world, task, templates=verifier.templates)
        try:
            conversation, took = _play(episode, task, steps, extra)
            if not took:
                continue  # the world refused the repeat: nothing happened twice
            answer = oracle_answer(task)
            verdict = verifier.grade(episode, task, answer, [*conversation, {"role": "assistant", "content": answer}])
        finally:
            episode.close()
        if verdict.passed:
            return EffectCheat(True, True, what)
        tried.append(f"{what}; fails: {failed_checks(verdict)[:200]}")
    if not tried:
        return EffectCheat(False, detail="the world refuses every repeat of the gold solution's irreversible calls")
    return EffectCheat(True, False, " | ".join(tried)[:600])
