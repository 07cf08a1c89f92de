"""Dialogue on generated worlds (issue 27, item 2): a detail the user gives only when asked
(`ask`), a change of mind when asked to confirm (`change`), a declined confirmation (`decline`).
Each way round: the gold conversation passes `mcpsim check`; a solution that does not ask, that
follows the first detail, or that writes after the no fails; the scripted user is deterministic
and reveals nothing it is not asked for; the `user_turns` feature counts the second turn."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.grading import Verifier
from mcpsim.specs._compiler import compile_spec
from mcpsim.taskgen._generator import TaskGenerator, task_set
from mcpsim.tasks import Action, Say, Task, gold_steps, oracle_answer, run_solution, scripted_reply, task_episode
from mcpsim.tasks._asking import UNKNOWN_REPLY, detail_question, proposals, reveals
from mcpsim.tasks._dialogue import YES_REPLY
from mcpsim.tasks._features import TaskFeatures

DIALOGUE_KINDS = ("ask", "change", "decline")


def generator_of(blueprint: str, variant: int, name: str) -> TaskGenerator:
    """A task generator on a catalogue world, at seed 0 and the small scale."""
    return TaskGenerator(compile_spec(expand(blueprints()[blueprint], variant, name=name)), seed=0, scale="small")


@pytest.fixture(scope="module")
def generator() -> Iterator[TaskGenerator]:
    gen = generator_of("bookstore", 1, "bookstore_t")
    yield gen
    gen.close()


@pytest.fixture(scope="module")
def dialogue(generator) -> dict[str, Task]:
    """The first sound task of each dialogue kind."""
    found = {}
    for kind in DIALOGUE_KINDS:
        for number, plan in enumerate(generator.kinds[kind].plans(generator.probe), 1):
            task = generator.task(plan, number)
            if not generator.sound(task):  # gold passes twice; do-nothing, baselines, near misses fail
                found[kind] = task
                break
            assert number < 6, f"no sound {kind} task in its first plans"
    return found


def graded(generator, task: Task, steps, answer: str | None = None):
    world = generator.compiled.world
    episode = task_episode(world, task, templates=generator.probe.templates)
    try:
        conversation = run_solution(episode, task, steps)
        verifier = Verifier(world, task_set(generator.compiled, [task]), templates=generator.probe.templates)
        verdict = verifier.grade(episode, task, oracle_answer(task) if answer is None else answer, conversation)
    finally:
        episode.close()
    return verdict, conversation


def user_says(task: Task, *agent: str) -> str | None:
    """The scripted user's reply after the instruction and the agent's messages `agent`."""
    messages = [{"role": "user", "content": task.instruction}]
    for text in agent:
        if messages[-1]["role"] == "assistant":
            messages.append({"role": "user", "content": scripted_reply(task, messages)})
        messages.append({"role": "assistant", "content": text})
    return scripted_reply(task, messages)


def write_of(generator, task: Task) -> Action:
    return next(a for a in task.gold if generator.compiled.world.tools[a.tool].writes)


# -- ask: a detail told only when asked ------------------------------------------------------------


def test_ask_the_instruction_leaves_out_which_record_and_the_user_tells_it_when_asked(generator, dialogue):
    task = dialogue["ask"]
    [(topic, answer)] = reveals(task).items()
    target = write_of(generator, task)
    assert not any(str(v) in task.instruction for v in target.args.values())
    assert answer.lower().rstrip(".").removeprefix("the one ") not in task.instruction.lower()
    # the gold asks first, and the user's answer is the detail
    steps = gold_steps(task, generator.compiled.world)
    assert steps[0] == Say(say=detail_question(topic))
    verdict, conversation = graded(generator, task, steps)
    assert verdict.passed and conversation[2] == {"role": "user", "content": answer}
    # the same question, the same answer; any wording that asks which one; never unasked
    assert user_says(task, f"Which {topic} do you mean?") == answer
    assert user_says(task, f"Which {topic} do you mean?") == answer
    assert user_says(task, "Could you tell me which one you want changed?") == answer
    assert user_says(task, "What is your e-mail address?") == UNKNOWN_REPLY
    assert user_says(task, "I have found your records.") is None  # no question: nothing said
    assert user_says(task, f"Done: your {topic} is updated. Anything else I can help you with?") is None
    features = TaskFeatures.of(task, generator.compiled.world)
    assert features.user_turns == 2 and features.gold_calls >= 4


def test_ask_acting_without_asking_on_another_candidate_fails(generator, dialogue):
    task = dialogue["ask"]
    target = write_of(generator, task)
    [miss] = [m for m in task.near_misses if "without asking" in m.name]
    assert miss.steps is not None and not any(isinstance(s, Say) and "mean" in s.say for s in miss.steps)
    wrote = [s for s in miss.steps if isinstance(s, Action) and s.tool == target.tool]
    assert wrote and wrote[0].args != target.args  # another record of the same kind and state
    verdict, _ = graded(generator, task, miss.steps)
    assert not verdict.passed
    # the transcriber (arguments copied from the instruction) cannot know which record
    report = check_baselines(generator, task, ["transcriber", "one_step_greedy"])
    assert not any(r.passed for r in report.values())


def check_baselines(generator, task, names):
    from mcpsim.audit import check_task

    tasks = task_set(generator.compiled, [task])
    verifier = Verifier(generator.compiled.world, tasks, templates=generator.probe.templates)
    report = check_task(generator.compiled.world, verifier, task, tasks.canaries, baselines=names)
    assert report.ok, report.problems
    return report.baselines


# -- change: the user changes one detail when asked to confirm ----------------------------------------


def test_change_the_gold_follows_the_changed_detail(generator, dialogue):
    task = dialogue["change"]
    [first] = proposals(task)
    then = write_of(generator, task)
    assert first.tool == then.tool and first.args != then.args
    steps = gold_steps(task, generator.compiled.world)
    verdict, conversation = graded(generator, task, steps)
    assert verdict.passed
    replies = [m["content"] for m in conversation[1:] if m["role"] == "user"]
    assert replies[0].startswith("No, sorry, I've changed my mind") and replies[1] == YES_REPLY
    # asked about the first record again, the user says the same; about the second, yes
    first_id, then_id = (next(iter(a.args.values())) for a in (first, then))
    assert user_says(task, f"Shall I {first.tool.replace('_', ' ')} {first_id}?") == replies[0]
    assert user_says(task, f"Shall I {then.tool.replace('_', ' ')} {then_id}?") == YES_REPLY
    assert TaskFeatures.of(task, generator.compiled.world).user_turns == 2


@pytest.mark.parametrize(("kind", "named"), [("change", "first detail"), ("decline", "said no")])
def test_writing_what_the_user_did_not_confirm_fails(generator, dialogue, kind, named):
    """The near miss that writes the proposal the user turned down (`change`: the first detail,
    `decline`: after the no) fails the final state and the confirmation; the decline's also
    fails when it writes without asking at all."""
    task = dialogue[kind]
    [proposed] = proposals(task)
    [miss] = [m for m in task.near_misses if named in m.name]
    assert miss.steps is not None and miss.steps[-1] == proposed
    verdict, _ = graded(generator, task, miss.steps)
    assert not verdict.passed
    assert {c.type for c in verdict.checks if not c.passed} >= {"gold_state", "confirmed"}
    if kind == "decline":
        silent = [s for s in miss.steps if not isinstance(s, Say)]
        verdict, _ = graded(generator, task, silent)
        assert not verdict.passed


# -- decline: the user says no to the write ---------------------------------------------------------


def test_decline_the_gold_writes_nothing_and_says_so(generator, dialogue):
    task = dialogue["decline"]
    world = generator.compiled.world
    assert not any(world.tools[a.tool].writes for a in task.gold)
    [declined] = proposals(task)
    steps = gold_steps(task, world)
    assert isinstance(steps[-1], Say)  # the request for the go-ahead, turned down
    verdict, conversation = graded(generator, task, steps)
    assert verdict.passed
    assert conversation[-1]["content"].startswith("No, please leave it as it is")
    key = str(next(iter(declined.args.values())))
    assert key in oracle_answer(task)  # the answer names the record left as it is
    assert TaskFeatures.of(task, world).user_turns == 2


def test_dialogue_tasks_are_deterministic(generator):
    """Two generators on the same world and seed draw the same dialogue tasks, word for word."""

    def drawn() -> list[str]:
        gen = TaskGenerator(generator.compiled, seed=0, scale="small", turns=DIALOGUE_KINDS)
        try:
            return [t.model_dump_json() for t, _ in zip(gen.candidates(), range(6), strict=False)]
        finally:
            gen.close()

    first = drawn()
    assert len(first) == 6 and first == drawn()


# -- the share -----------------------------------------------------------------------------------------


def test_at_least_30_percent_of_generated_tasks_need_a_second_user_turn():
    turns = []
    for name in ("bookstore", "campsite", "clinic"):
        compiled = compile_spec(expand(blueprints()[name], 4471, name=f"{name}_s"))
        gen = TaskGenerator(compiled, seed=0, scale="small")
        try:
            tasks = gen.generate(10)
            turns += [TaskFeatures.of(t, compiled.world, gen.probe.templates).user_turns for t in tasks]
        finally:
            gen.close()
    share = sum(n >= 2 for n in turns) / len(turns)
    assert len(turns) >= 25 and share >= 0.3, (share, turns)


def test_the_served_task_list_marks_every_dialogue_kind(generator, dialogue, serve_http):
    """`GET /worlds/W/tasks` says which tasks need a dialogue: an `ask` task too (no `turns`, no
    `confirmed` check: its detail comes only when asked), so a client runs the user for it."""
    tasks = list(dialogue.values())
    server = serve_http(
        [generator.compiled.world], tasks={generator.compiled.world.name: task_set(generator.compiled, tasks)}
    )
    listed = httpx.get(f"{server.url}/worlds/{generator.compiled.world.name}/tasks", timeout=60).json()
    assert {t["id"]: t["dialogue"] for t in listed} == {t.id: True for t in tasks}


# -- an errand whose first job names its record only when asked ---------------------------------------


def test_an_errand_can_leave_out_which_record_its_first_job_is_on_until_asked():
    from mcpsim.tasks._asking import DIALOGUE

    # generators of their own (the module's has drawn from its seeded `Random` in other tests), on
    # a few variants of the world: whether an errand asks is drawn, half the time
    for variant in range(1, 6):
        generator = generator_of("bookstore", variant, "bookstore_t")
        try:
            task = _asked_errand(generator, DIALOGUE)
            if task is not None:
                _check_asked_errand(generator, task)
                return
        finally:
            generator.close()
    pytest.fail("no sound errand asks which record its first job is on")


def _asked_errand(generator: TaskGenerator, DIALOGUE: str) -> Task | None:
    for number, plan in enumerate(generator.kinds["errand"].plans(generator.probe), 1):
        task = generator.task(plan, number)
        if DIALOGUE in plan.knows and not generator.sound(task):  # sound: no problem found
            return task
    return None


def _check_asked_errand(generator: TaskGenerator, task: Task) -> None:
    [(topic, answer)] = reveals(task).items()
    assert answer.lower().rstrip(".").removeprefix("the one ") not in task.instruction.lower()
    assert "one of my " in task.instruction
    steps = gold_steps(task, generator.compiled.world)
    assert steps[0] == Say(say=detail_question(topic))
    verdict, conversation = graded(generator, task, steps)
    assert verdict.passed and conversation[2] == {"role": "user", "content": answer}
    assert user_says(task, "I have found your records.") is None  # never told unasked
    features = TaskFeatures.of(task, generator.compiled.world)
    assert features.user_turns == 2 and features.gold_calls >= 8
    # the transcriber (arguments copied from the instruction) cannot know which record
    report = check_baselines(generator, task, ["transcriber", "one_step_greedy"])
    assert not any(r.passed for r in report.values())


def test_dialogue_tasks_meet_paged_listings_like_the_composed_ones(generator, dialogue):
    paged = [t for t in dialogue.values() if t.faults is not None]
    assert paged, "no dialogue task meets a paged listing"
    for task in paged:
        offsets = [a for a in task.gold if "offset" in a.args]
        assert offsets, task.id  # the gold asks for the next page
        verdict, _ = graded(generator, task, gold_steps(task, generator.compiled.world))
        assert verdict.passed


@pytest.fixture(scope="module")
def journals() -> Iterator[TaskGenerator]:
    """A world whose users hold several kinds of records (papers, royalties): jobs to follow up with."""
    gen = generator_of("academic_journals", 1, "journals_t")
    yield gen
    gen.close()


def test_ask_goes_on_with_the_users_other_jobs_and_each_is_graded(journals):
    """An asked pick followed by the user's other jobs (`_errands.follow_ups`): the instruction
    leaves out which record but states the other jobs; the gold asks, then does them all; leaving
    a follow-up job undone fails, and so does acting on another record without asking."""
    generator = journals
    for number, plan in enumerate(generator.kinds["ask"].plans(generator.probe), 1):
        if len(plan.tags) > 2:  # the pick's tool and rank, then a follow-up job's tool
            task = generator.task(plan, number)
            if not generator.sound(task):
                break
        assert number < 12, "no sound ask task with a follow-up job in its first plans"
    assert task.instruction.count(".") >= 2 and "one of my" in task.instruction
    steps = gold_steps(task, generator.compiled.world)
    verdict, conversation = graded(generator, task, steps)
    assert verdict.passed and conversation[1]["content"] == steps[0].say  # asked which one first
    writes = [i for i, s in enumerate(steps) if isinstance(s, Action) and generator.compiled.world.tools[s.tool].writes]
    assert len({steps[i].tool for i in writes}) >= 2 or len(writes) >= 2
    undone, _ = graded(generator, task, steps[: writes[-1]])  # the last write left out
    assert not undone.passed
    [miss] = [m for m in task.near_misses if "without asking" in m.name]
    assert not graded(generator, task, miss.steps)[0].passed
    assert TaskFeatures.of(task, generator.compiled.world).user_turns == 2
