"""`--record` in the HTTP server: every live episode journaled as it goes, and written (fsynced)
as soon as it is ended or graded, not only when it is deleted or expires."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import structlog

from mcpsim.engine import Episode, TemplateCache
from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._work import off_the_loop
from mcpsim.trajectories import Recorder

log = structlog.get_logger("mcpsim.http")


class _RecordingManager(EpisodeManager):
    """`--record`: every episode added (created, forked, restored, one per `/mcp` client) gets a
    live journal, so a crash leaves its calls behind, and is written when it is removed."""

    def __init__(self, recorder: Recorder, templates: TemplateCache, **options: Any) -> None:
        super().__init__(templates, on_retire=recorder.record, **options)
        self.recorder = recorder

    def add(self, episode: Episode) -> Episode:
        added = super().add(episode)
        try:
            self.recorder.track(added)
        except OSError:
            log.exception("could not journal a live episode", episode=added.id)
        return added


_ENDING = re.compile(r"^/episodes/([^/]+)/(end|verify)$")


class _RecordWhenEnded:
    """`--record`: writes (and fsyncs) an episode as soon as POST .../end or .../verify succeeds,
    before the response goes out (a caller that has the verdict knows it is on disk), not only
    when it is deleted or expires."""

    def __init__(self, app: Any, manager: EpisodeManager, recorder: Recorder) -> None:
        self.app, self.manager, self.recorder = app, manager, recorder

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        match = (
            _ENDING.match(scope.get("path", "")) if scope["type"] == "http" and scope.get("method") == "POST" else None
        )
        if match is None:
            await self.app(scope, receive, send)
            return
        held: list[Any] = []  # the response, held until the episode is written: durable once acknowledged

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start" or held:
                held.append(message)
                if message["type"] == "http.response.body" and not message.get("more_body", False):
                    if held[0]["status"] == 200:
                        await self._record(match.group(1))
                    for m in held:
                        await send(m)
                    held.clear()
                return
            await send(message)

        await self.app(scope, receive, watch)
        for m in held:  # a response cut short: pass on what there is
            await send(m)

    async def _record(self, episode_id: str) -> None:
        try:
            episode = self.manager.get(episode_id)
        except LookupError:  # deleted meanwhile: its deletion recorded it
            return
        try:
            await off_the_loop(partial(self.recorder.ended, episode))
        except Exception:  # a deleted-meanwhile episode, a full disk: the server goes on
            log.exception("recording an ended episode failed", episode=episode.id)
