"""Many live episodes in one process: unguessable ids, a cap, and expiry of idle episodes."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Literal

import structlog

from mcpsim.episode import Episode
from mcpsim.faults import FaultProfile
from mcpsim.registry import load_world
from mcpsim.scenario import task_episode
from mcpsim.tasks import TaskSet, load_tasks
from mcpsim.templates import TemplateCache
from mcpsim.verifier import Verifier
from mcpsim.world import World

log = structlog.get_logger("mcpsim.manager")

DEFAULT_ID = "default"


class EpisodeLimitReached(RuntimeError):
    pass


class EpisodeManager:
    """Creates, finds and removes episodes. The default episode (served at `/mcp`) never expires
    and does not count against the cap."""

    def __init__(
        self,
        templates: TemplateCache,
        *,
        max_episodes: int = 1000,
        ttl_seconds: float | None = 3600.0,
        worlds: Callable[[str], World] = load_world,
        tasks: Callable[[str], TaskSet] = load_tasks,
        clock: Callable[[], float] = time.monotonic,
        on_retire: Callable[[Episode], None] | None = None,
    ) -> None:
        self.templates = templates
        self.max_episodes = max_episodes
        self.ttl_seconds = ttl_seconds
        self.worlds = worlds
        self.tasks = tasks
        self.clock = clock
        self.on_retire = on_retire  # called with each episode before it is closed (recording)
        self._verifiers: dict[str, Verifier] = {}
        self._episodes: dict[str, Episode] = {}
        self._lock = threading.Lock()
        self.default: Episode | None = None

    def __len__(self) -> int:
        return len(self._episodes)

    def set_default(self, world: World, seed: int, scale: str, faults: FaultProfile | None = None) -> Episode:
        self.default = Episode.create_with_faults(world, seed, scale, faults, id=DEFAULT_ID, templates=self.templates)
        return self.default

    def verifier(self, world_name: str) -> Verifier:
        """The verifier of a world's tasks (tasks loaded once)."""
        with self._lock:
            if world_name not in self._verifiers:
                self._verifiers[world_name] = Verifier(self.worlds(world_name), self.tasks(world_name),
                                                       templates=self.templates)
            return self._verifiers[world_name]

    def create(self, world_name: str, seed: int = 0, scale: str = "default", task: str | None = None,
               faults: FaultProfile | None | Literal["task"] = "task") -> Episode:
        """Clone a new episode (builds the template first if this process has not yet). With a
        task, the task's seed, scale, setup and fault profile are used (`faults` overrides the
        profile; "task" keeps the task's, or none for plain episodes)."""
        world = self.worlds(world_name)
        task_spec = self.verifier(world_name).tasks.get(task) if task is not None else None
        if task_spec is None:
            world.scale_params(scale)
        self.reap()
        with self._lock:
            self._check_room()
        # Slow only the first time (template build, task setup): outside the lock.
        if task_spec is not None:
            episode = task_episode(world, task_spec, templates=self.templates, faults=faults)
        else:
            episode = Episode.create_with_faults(world, seed, scale, None if faults == "task" else faults,
                                                 templates=self.templates)
        try:
            self.add(episode)
        except EpisodeLimitReached:
            episode.close()
            raise
        log.info("episode created", world=world.name, episode=episode.id, seed=episode.seed, scale=episode.scale,
                 task=task)
        return episode

    def _check_room(self) -> None:
        if len(self._episodes) >= self.max_episodes:
            raise EpisodeLimitReached(
                f"this server already holds its maximum of {self.max_episodes} live episodes; "
                "delete finished episodes (DELETE /episodes/{id}) or raise --max-episodes"
            )

    def get(self, episode_id: str | None) -> Episode:
        """The episode with this id (None: the default one), or LookupError."""
        if episode_id is None or episode_id == DEFAULT_ID:
            if self.default is None:
                raise LookupError("this server has no default episode")
            return self.default
        episode = self._episodes.get(episode_id)
        now = self.clock()
        if episode is not None and self.ttl_seconds is not None and episode.last_used < now - self.ttl_seconds:
            self.delete(episode_id)
            episode = None
        if episode is None:
            raise LookupError(f"episode {episode_id} does not exist (it was deleted or expired)")
        episode.last_used = now
        return episode

    def add(self, episode: Episode) -> Episode:
        """Register an episode made elsewhere (a fork or a restored snapshot) under a fresh id."""
        with self._lock:
            self._check_room()
            episode.id = secrets.token_urlsafe(16)
            episode.log = episode.log.bind(episode=episode.id)
            episode.last_used = self.clock()
            self._episodes[episode.id] = episode
        return episode

    def delete(self, episode_id: str) -> bool:
        with self._lock:
            episode = self._episodes.pop(episode_id, None)
        if episode is None:
            return False
        self._retire(episode)
        log.info("episode deleted", world=episode.world.name, episode=episode_id)
        return True

    def _retire(self, episode: Episode) -> None:
        try:
            if self.on_retire is not None:
                self.on_retire(episode)
        except Exception:
            log.exception("recording an episode failed", episode=episode.id)
        finally:
            episode.close()

    def list(self) -> list[Episode]:
        with self._lock:
            return list(self._episodes.values())

    def reap(self) -> list[str]:
        """Delete episodes idle for longer than the TTL; returns their ids."""
        if self.ttl_seconds is None:
            return []
        cutoff = self.clock() - self.ttl_seconds
        with self._lock:
            expired = [i for i, e in self._episodes.items() if e.last_used < cutoff]
        for episode_id in expired:
            if self.delete(episode_id):
                log.info("episode expired", episode=episode_id)
        return expired

    def close(self) -> None:
        for episode_id in list(self._episodes):
            self.delete(episode_id)
        if self.default is not None:
            self._retire(self.default)
