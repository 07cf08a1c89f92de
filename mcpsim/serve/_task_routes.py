"""The control plane's routes on tasks: a world's task list (what a harness builds its prompts
from), an episode's verdict (graded once, then final), its simulated user's next turn, and its
trajectory, each verdict shown as much as the plane's `verdict_detail` allows."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpsim.engine import Episode
from mcpsim.grading import GradingUnavailable, Verdict, VerdictSummary, Verifier, load_verdict, shown
from mcpsim.serve._access import VerdictDetail
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._requests import HttpError, UserTurn, VerifyEpisode, _error, validated
from mcpsim.serve._work import off_the_loop
from mcpsim.tasks import Confirmed, Task, TaskFileError, scripted_reply
from mcpsim.trajectories import Trajectory, episode_trajectory
from mcpsim.world import World


class TaskRoutes:
    """GET /worlds/{world}/tasks, and POST .../verify, POST .../user and GET .../trajectory of an
    episode: handlers of a ControlPlane, which gives its world lookup, its episode lookup (404 for
    an unknown episode) and its JSON body reader."""

    def __init__(
        self,
        manager: EpisodeManager,
        verdict_detail: VerdictDetail,
        *,
        lookup: Callable[[str], World],
        episode_of: Callable[[Request], Episode],
        read_json: Callable[[Request], Awaitable[Any]],
    ) -> None:
        self.manager = manager
        self.verdict_detail = verdict_detail
        self.lookup, self.episode_of, self.read_json = lookup, episode_of, read_json
        self._grading_locks: weakref.WeakKeyDictionary[Episode, threading.Lock] = weakref.WeakKeyDictionary()
        self._grading_locks_lock = threading.Lock()

    async def list_tasks(self, request: Request) -> Response:
        """A world's tasks as a harness (or `mcpsim run --server` without the world) builds its
        prompts from them: id, split, the user's first message and persona, the authored tags and
        difficulty, and whether the rubric needs a dialogue (a confirmation, or more scripted user
        turns) beyond that message. Never the gold solution, the rubric, the answer facts, other
        solutions, what the user knows or wants, the scripted turns or the file's canary."""
        try:
            world = self.lookup(request.path_params["world"])
            tasks = await off_the_loop(lambda: self.manager.verifier(world.name).tasks.tasks)
        except (LookupError, TaskFileError) as exc:
            raise HttpError(404, str(exc).strip("'\"")) from None
        return JSONResponse(
            [
                {
                    "id": t.id,
                    "split": t.split,
                    "instruction": t.instruction,
                    "persona": t.user.persona,
                    "tags": list(t.tags),
                    "difficulty": t.difficulty,
                    "dialogue": bool(t.user.turns)
                    or "dialogue" in t.user.knows  # details told only when asked (a generated task's)
                    or any(isinstance(c, Confirmed) for c in t.rubric),
                }
                for t in tasks
            ]
        )

    async def verify_episode(self, request: Request) -> Response:
        episode = self.episode_of(request)
        spec = validated(VerifyEpisode, await self.read_json(request), "verify")
        task_id = self._task_of(episode, "there is no rubric to grade it against").id
        verifier = self.manager.verifier(episode.world.name)
        try:
            verdict = await off_the_loop(partial(self._grade_once, verifier, episode, task_id, spec), lane="grade")
        except GradingUnavailable as exc:  # not a verdict: the caller retries
            return _error(503, str(exc), headers={"Retry-After": "5"})
        return JSONResponse(shown(verdict, self.verdict_detail).model_dump(mode="json"))

    async def user_turn(self, request: Request) -> Response:
        """The simulated user's next message (`scripted_reply`): `{"message": text}`, or
        `{"message": null, "done": true}` when the user has nothing more to say, so a harness
        over HTTP can run a task's whole dialogue (confirmations, further requests)."""
        episode = self.episode_of(request)
        spec = validated(UserTurn, await self.read_json(request), "user")
        task = self._task_of(episode, "there is no simulated user without one")
        said = await off_the_loop(partial(scripted_reply, task, spec.messages))
        return JSONResponse({"message": said, "done": said is None})

    def _task_of(self, episode: Episode, why: str) -> Task:
        """The task the episode was created for; 422 (with `why`) for an episode of no task."""
        if episode.task_id is None:
            raise HttpError(422, f'this episode was not created for a task (POST /episodes with "task"); {why}')
        try:
            return self.manager.verifier(episode.world.name).tasks.get(episode.task_id)
        except (LookupError, TaskFileError) as exc:
            raise HttpError(404, str(exc).strip("'\"")) from None

    def _grade_once(
        self, verifier: Verifier, episode: Episode, task_id: str, spec: VerifyEpisode
    ) -> Verdict | VerdictSummary:
        """A verdict is final: the first grading's verdict is stored in the episode's database
        and every later verify returns it unchanged, whatever the new answer (one grading at a
        time per episode). In summary mode only the summary is stored: the detail never leaves
        the grading, not even through a snapshot or the trajectory."""
        with self._grading_locks_lock:
            lock = self._grading_locks.setdefault(episode, threading.Lock())
        with lock:
            stored = episode.verdict
            if stored is not None:
                return load_verdict(stored)
            keep = None if self.verdict_detail == "full" else Verdict.summary
            verdict = verifier.grade(episode, task_id, spec.answer, conversation=spec.messages, stored=keep)
            return verdict if keep is None else keep(verdict)

    async def trajectory(self, request: Request) -> Response:
        episode = self.episode_of(request)

        def recorded() -> Trajectory:
            stored = episode.verdict
            verdict = shown(load_verdict(stored), self.verdict_detail) if stored is not None else None
            return episode_trajectory(episode, verdict=verdict.model_dump(mode="json") if verdict else None)

        trajectory = await off_the_loop(recorded)
        return JSONResponse(trajectory.model_dump(mode="json"))
