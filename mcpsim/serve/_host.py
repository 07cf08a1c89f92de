"""Many live episodes in one process: unguessable ids, caps, expiry of idle episodes, and the
idle-episode store: past `max_active` open episodes, the least recently used are parked (kept as
their pages that differ from the shared template, `Episode.park`) and rebuilt on their next use."""

from __future__ import annotations

import builtins
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal

import structlog

from mcpsim._sizes import format_size
from mcpsim.engine import Episode, EpisodeClosed, FaultProfile, TemplateCache
from mcpsim.grading import Verifier
from mcpsim.serve._settings import (
    DEFAULT_MAX_BYTES_PER_EPISODE,
    DEFAULT_MAX_EPISODE_BYTES,
    DEFAULT_MAX_EPISODES,
    DEFAULT_TTL_SECONDS,
)
from mcpsim.tasks import TaskSet, load_tasks, task_episode
from mcpsim.world import World, load_world

log = structlog.get_logger("mcpsim.serve._host")

DEFAULT_ID = "default"
GONE_REMEMBERED = 10_000  # removed episodes whose reason is kept for their clients (a few MB at most)
DEFAULT_MAX_ACTIVE = 256  # episodes kept open (a private database each); the rest are parked


class EpisodeLimitReached(RuntimeError):
    pass


@dataclass(frozen=True)
class DefaultSpec:
    """What `/mcp` serves: episodes of this world, seed, scale and fault profile."""

    world: World
    seed: int
    scale: str
    faults: FaultProfile | None
    shared: bool  # one episode for every client (--shared-default), else one per client


@dataclass(eq=False, repr=False)
class EpisodeManager:
    """Creates, finds and removes episodes. The default episode (served at `/mcp`) never expires
    and does not count against the caps: at most `max_episodes` live episodes, holding at most
    `max_episode_bytes` of databases together (None: no byte cap). An episode's size is its
    database's page count times its page size, kept current after every operation on it. Each
    episode it holds (the default one too) is capped at `max_bytes_per_episode` (None: no cap):
    a tool call writing past it is rolled back and answered with the reason, so one agent grows
    the sum by at most that much per episode it holds (`mcpsim.engine._storage`).

    Removing an episode (delete, expiry, shutdown) closes it under its own lock: an operation in
    progress finishes first, and any later one on it raises `EpisodeClosed` (a LookupError)."""

    templates: TemplateCache
    _: KW_ONLY
    max_episodes: int = DEFAULT_MAX_EPISODES
    max_episode_bytes: int | None = DEFAULT_MAX_EPISODE_BYTES
    max_bytes_per_episode: int | None = DEFAULT_MAX_BYTES_PER_EPISODE
    ttl_seconds: float | None = DEFAULT_TTL_SECONDS
    worlds: Callable[[str], World] = load_world
    tasks: Callable[[str], TaskSet] = load_tasks
    clock: Callable[[], float] = time.monotonic
    on_retire: Callable[[Episode], None] | None = None  # called with each episode before it is closed (recording)
    max_active: int | None = DEFAULT_MAX_ACTIVE  # open episodes kept (None: never park)
    # the state, not arguments:
    _verifiers: dict[str, Verifier] = field(default_factory=dict, init=False)
    _episodes: dict[str, Episode] = field(default_factory=dict, init=False)
    # why recently removed episodes went, for their clients
    _gone: OrderedDict[str, str] = field(default_factory=OrderedDict, init=False)
    _open: OrderedDict[str, Episode] = field(default_factory=OrderedDict, init=False)  # least recently used first
    parks: int = field(default=0, init=False)  # episodes parked so far (a parked one rebuilds itself on its next use)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    # the one episode `/mcp` serves to everyone (--shared-default)
    default: Episode | None = field(default=None, init=False)
    # what `/mcp` serves: shared, or one fresh episode per client
    default_spec: DefaultSpec | None = field(default=None, init=False)
    # a team task's role endpoints: alias id -> (episode id, role) (`mcpsim.serve._roles`)
    role_endpoints: dict[str, tuple[str, str]] = field(default_factory=dict, init=False)

    def __len__(self) -> int:
        return len(self._episodes)

    def __contains__(self, episode_id: object) -> bool:
        return episode_id in self._episodes

    def set_default(
        self, world: World, seed: int, scale: str, faults: FaultProfile | None = None, *, shared: bool = False
    ) -> Episode | None:
        """What `/mcp` serves. By default each client (MCP session) gets a fresh episode of this
        world, seed and scale (`create_default`), so agents cannot see, or pass notes through, each
        other's writes. `shared=True` builds the one old-style default episode that every client of
        `/mcp` shares (id "default", never expires, outside the caps); it is returned."""
        self.default_spec = DefaultSpec(world, seed, scale, faults, shared)
        self.default = (
            Episode.create_with_faults(world, seed, scale, faults, id=DEFAULT_ID, templates=self.templates)
            if shared
            else None
        )
        if self.default is not None:
            self.default.limit_storage(self.max_bytes_per_episode)
        return self.default

    @property
    def default_world(self) -> World | None:
        """The world of `/mcp` (and of POST /episodes without a world), if the server has one."""
        return self.default_spec.world if self.default_spec else None

    def create_default(self) -> Episode:
        """A fresh episode like the default one, for one client of `/mcp`: a normal episode (an
        unguessable id, the caps, the TTL, listed by GET /episodes)."""
        spec = self.default_spec
        if spec is None:
            raise LookupError("this server has no default episode")
        return self.create(spec.world.name, spec.seed, spec.scale, None, spec.faults)

    def verifier(self, world_name: str) -> Verifier:
        """The verifier of a world's tasks (tasks loaded once)."""
        with self._lock:
            if world_name not in self._verifiers:
                self._verifiers[world_name] = Verifier(
                    self.worlds(world_name), self.tasks(world_name), templates=self.templates
                )
            return self._verifiers[world_name]

    def create(
        self,
        world_name: str,
        seed: int = 0,
        scale: str = "default",
        task: str | None = None,
        faults: FaultProfile | None | Literal["task"] = "task",
    ) -> Episode:
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
            episode = Episode.create_with_faults(
                world, seed, scale, None if faults == "task" else faults, templates=self.templates
            )
        try:
            self.add(episode)
        except EpisodeLimitReached:
            episode.close("refused (the server is full)")
            raise
        log.info(
            "episode created", world=world.name, episode=episode.id, seed=episode.seed, scale=episode.scale, task=task
        )
        return episode

    def create_group(self, size: int, make: Callable[[], Episode]) -> builtins.list[Episode]:
        """`size` episodes made by `make` (`create` with the same arguments: one task's, or one
        world's at one seed and scale, so they start from the same state), all or none: room for
        every one is checked first, and those made are deleted if a later one fails."""
        self.reap()
        with self._lock:
            self._check_room(count=size)
        made: builtins.list[Episode] = []
        try:
            for _ in range(size):
                made.append(make())
        except BaseException:
            for episode in made:
                self.delete(episode.id, "refused (its group could not be completed)")
            raise
        return made

    def live_bytes(self) -> int:
        """The bytes the live episodes hold (the default episode left out): each one's database (a
        parked one: the pages it keeps), plus once each template an episode keeps alive as its
        base, which the template cache may already have let go."""
        episodes = list(self._episodes.values())
        bases = {id(b): len(b) for e in episodes if (b := e.base) is not None}
        return sum(e.size_bytes for e in episodes) + sum(bases.values())

    def _check_room(self, new_bytes: int = 0, count: int = 1) -> None:
        """Refuse `count` more episodes (of `new_bytes`, when known) past either cap (caller holds the lock)."""
        if count > 1 and len(self._episodes) + count > self.max_episodes:
            raise EpisodeLimitReached(
                f"a group of {count} episodes does not fit: this server holds {len(self._episodes)} of its "
                f"maximum of {self.max_episodes} live episodes; delete finished episodes (DELETE /episodes/{{id}}) "
                "or raise --max-episodes"
            )
        if len(self._episodes) >= self.max_episodes:
            raise EpisodeLimitReached(
                f"this server already holds its maximum of {self.max_episodes} live episodes; "
                "delete finished episodes (DELETE /episodes/{id}) or raise --max-episodes"
            )
        if self.max_episode_bytes is not None:
            used = self.live_bytes()
            if used + new_bytes > self.max_episode_bytes:
                raise EpisodeLimitReached(
                    f"this server's live episodes hold {format_size(used)} of their "
                    f"{format_size(self.max_episode_bytes)} memory budget"
                    + (f" and a new one needs {format_size(new_bytes)}" if new_bytes else "")
                    + "; delete finished episodes (DELETE /episodes/{id}) or raise --max-episode-bytes"
                )

    def get(self, episode_id: str | None) -> Episode:
        """The episode with this id (None: the default one), or LookupError."""
        if episode_id is None or episode_id == DEFAULT_ID:
            if self.default is None:
                raise LookupError("this server has no default episode")
            return self.default
        episode = self._episodes.get(episode_id)
        now = self.clock()
        if episode is not None and self.ttl_seconds is not None and self._expire(episode_id, now - self.ttl_seconds):
            episode = None
        if episode is None:
            raise LookupError(self.gone_message(episode_id))
        episode.last_used = now
        self._touch(episode)
        return episode

    def _touch(self, episode: Episode) -> None:
        """Mark an episode as the most recently used open one, and park the least recently used
        past `max_active` (outside the manager's lock: parking copies the database once). An
        episode busy at that moment stays open and is tried again later."""
        if self.max_active is None:
            return
        with self._lock:
            self._open[episode.id] = episode
            self._open.move_to_end(episode.id)
            excess = len(self._open) - self.max_active
            victims = [self._open.popitem(last=False)[1] for _ in range(max(0, excess))]
        for victim in victims:
            if victim.park():
                self.parks += 1
            elif not victim.closed and not victim.parked and victim.parkable:
                with self._lock:  # in use right now: it is among the active ones
                    if victim.id in self._episodes:
                        self._open[victim.id] = victim

    def add(self, episode: Episode) -> Episode:
        """Register an episode made elsewhere (a fork or a restored snapshot) under a fresh id,
        with this server's storage limit per episode."""
        episode.limit_storage(self.max_bytes_per_episode)
        with self._lock:
            self._check_room(episode.size_bytes)
            episode.id = secrets.token_urlsafe(16)
            episode.log = episode.log.bind(episode=episode.id)
            episode.last_used = self.clock()
            self._episodes[episode.id] = episode
        self._touch(episode)
        return episode

    def delete(self, episode_id: str, reason: str = "deleted") -> bool:
        """Remove and close an episode; False if there is none by that id (any more)."""
        with self._lock:
            episode = self._episodes.pop(episode_id, None)
            self._open.pop(episode_id, None)
        if episode is None:
            return False
        self._retire(episode, reason)
        log.info(f"episode {reason}", world=episode.world.name, episode=episode_id)
        return True

    def _expire(self, episode_id: str, cutoff: float) -> bool:
        """Remove an episode if it is (still) idle since before `cutoff`: one used meanwhile stays."""
        with self._lock:
            episode = self._episodes.get(episode_id)
            if episode is None or episode.last_used >= cutoff:
                return False
            del self._episodes[episode_id]
            self._open.pop(episode_id, None)
        self._retire(episode, f"expired after {self.ttl_seconds:g} s idle")
        log.info("episode expired", world=episode.world.name, episode=episode_id)
        return True

    def gone_message(self, episode_id: str) -> str:
        """Why there is no episode by this id: its reason if it was removed recently."""
        reason = self._gone.get(episode_id)
        if reason is None:
            return f"episode {episode_id} does not exist (it was deleted or expired)"
        return EpisodeClosed(episode_id, reason).args[0]

    def _retire(self, episode: Episode, reason: str = "deleted") -> None:
        with self._lock:
            self._gone.setdefault(episode.id, reason)  # the first reason, as `Episode.close` keeps it
            while len(self._gone) > GONE_REMEMBERED:
                self._gone.popitem(last=False)
        try:
            if self.on_retire is not None:
                self.on_retire(episode)
        except Exception:
            log.exception("recording an episode failed", episode=episode.id)
        finally:
            episode.close(reason)

    def list(self) -> list[Episode]:
        with self._lock:
            return list(self._episodes.values())

    def reap(self) -> builtins.list[str]:
        """Delete episodes idle for longer than the TTL; returns their ids."""
        if self.ttl_seconds is None:
            return []
        cutoff = self.clock() - self.ttl_seconds
        with self._lock:
            idle = [i for i, e in self._episodes.items() if e.last_used < cutoff]
        return [episode_id for episode_id in idle if self._expire(episode_id, cutoff)]

    def close(self) -> None:
        for episode_id in list(self._episodes):
            self.delete(episode_id, "closed (the server shut down)")
        if self.default is not None:
            self._retire(self.default, "closed (the server shut down)")
