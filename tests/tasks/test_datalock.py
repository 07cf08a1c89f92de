"""Tasks are refused, with a clear message, when the world's data is not the data they were
written against (another Faker release, changed seed code), instead of failing obscurely."""

from __future__ import annotations

import pytest

from mcpsim.engine._templates import TemplateCache
from mcpsim.tasks import datalock, load_tasks
from mcpsim.tasks._scenario import TaskSetupError, task_episode
from mcpsim.world._registry import load_world, world_names


@pytest.mark.parametrize("name", world_names())
def test_every_world_ships_a_lock_for_every_seed_and_scale_its_tasks_use(name):
    lock = datalock.read_lock(name)
    assert lock is not None
    assert {f"{t.seed}/{t.scale}" for t in load_tasks(name).tasks} <= set(lock)


def test_a_task_on_data_that_moved_is_refused_with_what_moved_and_how_to_fix_it(monkeypatch):
    world, tasks = load_world("retail"), load_tasks("retail")
    monkeypatch.setattr(datalock, "read_lock", lambda name: {"0/default": "0" * 64})
    monkeypatch.setattr(datalock, "_verified", set())
    with pytest.raises(TaskSetupError) as caught:
        task_episode(world, tasks.tasks[0], templates=TemplateCache(None))
    message = str(caught.value)
    assert "other than the data its tasks were written against" in message
    assert "Faker release" in message and "python -m mcpsim.tasks.datalock retail" in message


def test_the_lock_is_checked_against_the_real_template(monkeypatch, templates):
    world, tasks = load_world("retail"), load_tasks("retail")
    monkeypatch.setattr(datalock, "_verified", set())
    episode = task_episode(world, tasks.tasks[0], templates=TemplateCache(None))  # the shipped lock matches
    episode.close()
    assert ("retail", world.version, 0, "default") in datalock._verified
