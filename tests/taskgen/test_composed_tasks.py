"""Composed tasks on generated worlds: targets named by a property (pick), a branch the data decides
(branch), several records in one job (sweep), a condition per record read through a reference
(triage), a total answered and used to pick the record (tally). Each names no id, chains (a later
call's argument only an earlier result shows), passes `mcpsim check` (gold passes, the do-nothing
and cheating baselines and the near miss fail), and its gold is the one the data decides."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._lint import id_arg
from mcpsim.taskgen._generator import TURNS, TaskGenerator, plans_in_turn
from mcpsim.taskgen._targets import owned, owners, records, transitions
from mcpsim.tasks import Action, CountFact, MoneyFact

COMPOSED = ("pick", "branch", "sweep", "triage", "tally", "review", "errand")


@pytest.fixture(scope="module")
def generator() -> Iterator[TaskGenerator]:
    compiled = compile_spec(expand(blueprints()["campsite"], 3, name="campsite_t"))
    gen = TaskGenerator(compiled, seed=0, scale="small")
    yield gen
    gen.close()


@pytest.fixture(scope="module")
def composed(generator):
    """The first sound task of each composed kind."""
    found = {}
    for kind in COMPOSED:
        for number, plan in enumerate(generator.kinds[kind].plans(generator.probe), 1):
            task = generator.task(plan, number)
            if not generator.sound(task):
                found[kind] = (plan, task)
                break
            assert number < 6, f"no sound {kind} task in its first plans"
    return found


def replay(generator, task):
    """Each gold call's arguments and the JSON text of what it returned, in order."""
    episode = generator.start.fork(id="test-composed")
    try:
        out = []
        for a in task.gold:
            result = episode.call(a.tool, a.args)
            assert not result.is_error, (a, result.error)
            value = result.value.model_dump(mode="json") if hasattr(result.value, "model_dump") else result.value
            out.append((a, json.dumps(value, default=str)))
        return out
    finally:
        episode.close()


@pytest.mark.parametrize("kind", COMPOSED)
def test_composed_task_names_no_id_and_chains(generator, composed, kind):
    plan, task = composed[kind]
    assert len(task.gold) >= 4
    ids = {str(v) for a in task.gold for k, v in a.args.items() if k.endswith("_id")}
    assert ids and not any(i in task.instruction for i in ids), task.instruction
    # the user knows their name, not the ids (an asked errand's user also knows which record: by rank)
    assert set(task.user.knows) - {"dialogue"} == {"name"}
    assert not any(i in json.dumps(task.user.knows) for i in ids)
    calls = replay(generator, task)
    chained = [
        a
        for i, (a, _) in enumerate(calls)
        if any(str(v) in text for v in a.args.values() if isinstance(v, str) for _, text in calls[:i])
    ]
    assert len(chained) >= 2  # the user's id from the search, then a record's from the list
    assert task.gold[0].tool.startswith("search_")  # found by name, then verified
    assert task.gold[1].args == {id_arg(generator.probe.identity): plan.person}


@pytest.mark.parametrize("kind", COMPOSED)
def test_composed_task_is_sound_and_its_near_miss_fails(generator, composed, kind):
    _, task = composed[kind]
    assert generator.sound(task) == []
    assert task.near_misses and task.near_misses[0].steps != task.gold
    # the wrong form: doing the near miss's work instead of the gold's is refused by `sound`'s
    # check; here, a task whose gold is the near miss's steps is not sound (its near miss passes)
    wrong = task.model_copy(update={"gold": [s for s in task.near_misses[0].steps if hasattr(s, "tool")]})
    assert generator.sound(wrong), "the near miss's steps pass the task's own rubric"


def test_pick_acts_on_the_top_record(generator, composed):
    plan, task = composed["pick"]
    probe = generator.probe
    write = task.gold[-1]
    entity = next(a.entity for a in probe.spec.actions if a.name == write.tool)
    missed = next(a for a in task.near_misses[0].steps if hasattr(a, "tool") and a.tool == write.tool)
    assert missed.args[id_arg(entity)] != write.args[id_arg(entity)]


def test_branch_follows_the_state_of_the_record(generator, composed):
    plan, task = composed["branch"]
    probe = generator.probe
    write = task.gold[-1]
    spec = next(a for a in probe.spec.actions if a.name == write.tool)
    row = probe.row(spec.entity, write.args[id_arg(spec.entity)])
    machine = probe.spec.entities[spec.entity].state_machine
    asked = plan.tags[1].removeprefix("if_").replace("_", " ")
    holds = row[machine.field].replace("_", " ") == asked
    said = task.instruction.casefold().split(f"if it is {asked}", 1)[1]
    yes, no = said.split("otherwise" if "otherwise" in said else "if not", 1)
    taken, other = (yes, no) if holds else (no, yes)
    assert spec.name.split("_")[0] in taken and spec.name.split("_")[0] not in other


def test_sweep_acts_on_every_matching_record(generator, composed):
    plan, task = composed["sweep"]
    probe = generator.probe
    writes = [a for a in task.gold if probe.world.tools[a.tool].writes]
    assert len(writes) >= 2 and len({json.dumps(a.args, sort_keys=True) for a in writes}) == len(writes)
    assert [s for s in task.near_misses[0].steps if isinstance(s, Action)] == task.gold[:-1]


def test_triage_reads_each_referenced_record_and_decides_per_record(generator, composed):
    plan, task = composed["triage"]
    probe = generator.probe
    writes = [a for a in task.gold if probe.world.tools[a.tool].writes]
    assert len(writes) >= 3 and len({a.tool for a in writes}) == 2
    assert len(task.gold) >= 8


def test_tally_answers_the_count_and_total_of_the_records(generator, composed):
    plan, task = composed["tally"]
    probe = generator.probe
    money = next(f for f in task.answer if isinstance(f, MoneyFact))
    count = next(f for f in task.answer if isinstance(f, CountFact))
    listed = next(a for a in task.gold if a.tool.startswith("list_"))
    kind = next(k for k in owned(probe) if k.lister.name == listed.tool)
    state = listed.args.get(kind.state)
    rows = records(probe, kind, plan.person, state)
    field = plan.tags[1].removeprefix("total_")
    assert count.count == len(rows) and money.money == pytest.approx(sum(r[field] for r in rows) / 100)


def test_errand_does_both_jobs_and_doing_only_the_first_fails(generator, composed):
    plan, task = composed["errand"]
    probe = generator.probe
    writes = [a for a in task.gold if probe.world.tools[a.tool].writes]
    assert len(writes) >= 2 and "first" in task.instruction.casefold() or "then" in task.instruction.casefold()
    only_first = [s for s in task.near_misses[0].steps if isinstance(s, Action)]
    assert only_first == task.gold[: len(only_first)] and len(only_first) < len(task.gold)


def test_review_reads_each_referred_record_and_changes_only_those_the_condition_picks(generator, composed):
    plan, task = composed["review"]
    world = generator.probe.world
    writes = [a for a in task.gold if world.tools[a.tool].writes]
    reads = [a for a in task.gold if not world.tools[a.tool].writes]
    assert writes and " where " in task.instruction and "only those" in task.instruction
    # each change comes after the read that decides it; the near miss changes one record too many or too few
    for write in writes:
        assert any(a in reads for a in task.gold[: task.gold.index(write)])
    missed = [s for s in task.near_misses[0].steps if isinstance(s, Action) and world.tools[s.tool].writes]
    assert len(missed) != len(writes)


def test_composed_plans_meet_paged_listings_and_a_write_that_times_out(generator):
    """Where a listing shows more than a page, the plan's profile caps it and the gold pages with
    `offset`; where its first write can be read back, that write times out (committed, answer
    lost) and the gold reads the record instead of writing again. The task passes `mcpsim check`."""
    met = {"paged": None, "timeout": None}
    for kind in ("sweep", "review", "errand"):
        for number, plan in enumerate(generator.kinds[kind].plans(generator.probe), 1):
            if plan.faults is None:
                continue
            task = generator.task(plan, number)
            if generator.sound(task):
                continue
            profile = task.fault_profile()
            assert profile is not None
            script = profile.model_dump(mode="json")["script"]
            if met["paged"] is None and any("offset" in a.args and a.args["offset"] for a in task.gold):
                met["paged"] = task
            if met["timeout"] is None and any(s["fault"] == "timeout" for s in script):
                met["timeout"] = task
            if all(met.values()):
                break
        if all(met.values()):
            break
    assert met["paged"] is not None, "no composed plan pages its listings"
    assert met["timeout"] is not None, "no composed plan meets a write that times out"
    task = met["timeout"]
    world = generator.probe.world
    first_write = next(i for i, a in enumerate(task.gold) if world.tools[a.tool].writes)
    assert task.gold[first_write].expect == "error"  # the write commits, its answer is lost
    assert not world.tools[task.gold[first_write + 1].tool].writes  # read back, not written again
    assert task.gold.count(task.gold[first_write]) == 1


def test_turns_give_the_composed_kinds_most_turns():
    sources = {k: iter([_Key(f"{k}{i}") for i in range(3)]) for k in ("a", "b")}
    assert [p.name for p in plans_in_turn(sources, ["a", "a", "b"])] == ["a0", "a1", "b0", "a2", "b1", "b2"]
    # the dialogue kinds (test_dialogue_tasks.py) are picks too: a target named by a property, chained
    assert sum(t in (*COMPOSED, "ask", "change", "decline") for t in TURNS) >= 0.7 * len(TURNS)


class _Key:
    def __init__(self, name: str) -> None:
        self.name = name

    def key(self) -> str:
        return self.name


def test_sweeps_start_with_the_user_with_the_most_records_and_every_sweep_meets_faults(generator):
    """The longest sweeps first: the first sweep is for a user who holds the most records of the
    kinds a sweep changes; and every sweep pages its listings or has its first write time out, so
    the gold reads the record back instead of writing twice."""
    probe = generator.probe
    kinds = [k for k in owned(probe) if k.state is not None and transitions(probe, k.entity)]
    held = {p: sum(len(records(probe, k, p)) for k in kinds) for k in kinds for p in owners(probe, k)}
    plans = [plan for _, plan in zip(range(3), generator.kinds["sweep"].plans(probe), strict=False)]
    assert plans and held[plans[0].person] == max(held.values())
    world = probe.world
    for plan in plans:
        assert plan.faults is not None
        first = next(i for i, a in enumerate(plan.actions) if world.tools[a.tool].writes)
        assert plan.actions[first].expect == "error" and not world.tools[plan.actions[first + 1].tool].writes
