"""Fixtures for the task-set tests of the hand-built worlds: the world a test module names in
its `WORLD` and that world's tasks, loaded once per module."""

from __future__ import annotations

import pytest

from mcpsim.tasks import TaskSet, load_tasks
from mcpsim.world import World, load_world


@pytest.fixture(scope="module")
def world(request: pytest.FixtureRequest) -> World:
    return load_world(request.module.WORLD)


@pytest.fixture(scope="module")
def task_set(request: pytest.FixtureRequest) -> TaskSet:
    return load_tasks(request.module.WORLD)
