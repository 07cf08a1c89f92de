"""The viewer's HTTP side: one page (plain HTML, CSS and JavaScript shipped in the package, no
CDN, no build step) and the JSON it reads, for runs on disk (`mcpsim view`) and for a server's
live episodes (`mcpsim serve --http`, at `/ui`).

Every URL the page uses is relative, so the same page works at `/` and under `/ui/`. Filtering,
sorting, paging and sums happen here, never in the browser. The page's routes are hash routes
(`#/runs/0/episodes/TASK@TRIAL/calls/3`), so a deep link is a URL that can be shared."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from typing import Any, Protocol

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from mcpsim.engine import Episode, EpisodeClosed
from mcpsim.grading import VerdictDetail, load_verdict, shown
from mcpsim.trajectories import episode_trajectory
from mcpsim.view._runs import Query, RunError, RunFile, compare, dumps, episode_json, facets, summarize

STATIC = "static"
POLL_SECONDS = 1.0  # how often the page asks a live episode for news (the page reads it from /api/info)


def _json(data: Any, status: int = 200) -> Response:
    return Response(dumps(data), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def _page_routes() -> list[BaseRoute]:
    index = files("mcpsim.view") / STATIC / "index.html"

    async def page(request: Request) -> Response:
        return FileResponse(str(index), headers={"Cache-Control": "no-cache"})

    return [
        Route("/", page, methods=["GET"]),
        Mount("/static", app=StaticFiles(packages=[("mcpsim.view", STATIC)]), name="static"),
    ]


# -- runs on disk -------------------------------------------------------------------------------


class RunPages:
    """The JSON of `mcpsim view`: the runs given, each indexed once (`RunFile`)."""

    def __init__(self, runs: list[RunFile]) -> None:
        if not runs:
            raise ValueError("give at least one run")
        self.runs = runs

    def run(self, request: Request, param: str = "run") -> RunFile:
        text = request.path_params[param]
        if not text.isdigit() or int(text) >= len(self.runs):
            raise LookupError(f"no run {text[:20]!r}: this viewer has runs 0 to {len(self.runs) - 1}")
        return self.runs[int(text)]

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/api/info", self.info, methods=["GET"]),
            Route("/api/runs/{run}/summary", self.summary, methods=["GET"]),
            Route("/api/runs/{run}/episodes", self.episodes, methods=["GET"]),
            Route("/api/runs/{run}/episodes/{eid}", self.episode, methods=["GET"]),
            Route("/api/compare/{a}/{b}", self.compare, methods=["GET"]),
        ]

    @staticmethod
    async def _answer(work: Callable[[], Any]) -> Response:
        """`work` off the event loop (reading and sorting a large run takes a while), its refusals
        as JSON errors with the reason."""
        try:
            return _json(await anyio.to_thread.run_sync(work))
        except RunError as exc:
            return _error(422, str(exc))
        except LookupError as exc:
            return _error(404, str(exc))

    async def info(self, request: Request) -> Response:
        return await self._answer(lambda: {"mode": "runs", "runs": [r.describe() for r in self.runs]})

    async def summary(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            run = self.run(request)
            query = Query.parse(dict(request.query_params))
            rows = run.rows()
            return {
                "run": run.describe(),
                "summary": summarize([r for r in rows if query.matches(r)]),
                "facets": facets(rows),
            }

        return await self._answer(work)

    async def episodes(self, request: Request) -> Response:
        return await self._answer(lambda: Query.parse(dict(request.query_params)).page(self.run(request).rows()))

    async def episode(self, request: Request) -> Response:
        def work() -> dict[str, Any]:
            run = self.run(request)
            eid = request.path_params["eid"]
            return episode_json(run.episode(eid), run.row(eid))

        return await self._answer(work)

    async def compare(self, request: Request) -> Response:
        """Two runs matched by task and trial; `only`: flipped (passed in one run only), changed
        (any reward or partial-reward delta) or all; the filters of the episode table apply to
        either side; sorted by the size of the partial-reward change, then task."""

        def work() -> dict[str, Any]:
            params = dict(request.query_params)
            only = params.get("only", "all")
            if only not in ("all", "flipped", "changed"):
                raise RunError("only must be all, flipped or changed")
            query = Query.parse(params)
            a, b = self.run(request, "a"), self.run(request, "b")
            rows = compare([r for r in a.rows() if query.matches(r)], [r for r in b.rows() if query.matches(r)])
            counts = {
                "fixed": sum(1 for r in rows if r["flipped"] == "fixed"),
                "broke": sum(1 for r in rows if r["flipped"] == "broke"),
                "only_a": sum(1 for r in rows if r["b"] is None),
                "only_b": sum(1 for r in rows if r["a"] is None),
                "matched": sum(1 for r in rows if r["a"] is not None and r["b"] is not None),
            }
            if only == "flipped":
                rows = [r for r in rows if r["flipped"]]
            elif only == "changed":
                rows = [r for r in rows if r["flipped"] or (r["partial_delta"] or 0) != 0]
            rows.sort(key=lambda r: (-abs(r["partial_delta"] or 0), r["task_id"], r["trial"]))
            return {
                "a": a.describe(),
                "b": b.describe(),
                "counts": counts,
                "total": len(rows),
                "offset": query.offset,
                "limit": query.limit,
                "rows": rows[query.offset : query.offset + query.limit],
            }

        return await self._answer(work)


def run_viewer(runs: list[RunFile], middleware: list[Any] | None = None) -> Starlette:
    """The app of `mcpsim view`: the page at `/`, the runs' JSON under `/api`."""
    return Starlette(routes=[*_page_routes(), *RunPages(runs).routes()], middleware=middleware)


# -- live episodes ------------------------------------------------------------------------------


class Episodes(Protocol):
    """What the live pages need of a server's episode manager (`mcpsim.serve._host`)."""

    def list(self) -> list[Episode]: ...

    def get(self, episode_id: str | None) -> Episode: ...


class LivePages:
    """The JSON of `/ui` on `mcpsim serve --http`: the server's live episodes, behind its
    control-plane token (`authorized`), verdicts shown in its verdict detail. The page polls an
    open episode every POLL_SECONDS and receives it again only when it changed."""

    def __init__(self, episodes: Episodes, authorized: Callable[[Request], bool], detail: VerdictDetail) -> None:
        self.episodes, self.authorized, self.detail = episodes, authorized, detail

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/api/info", self.guard(self.info), methods=["GET"]),
            Route("/api/live", self.guard(self.list), methods=["GET"]),
            Route("/api/live/{episode_id}", self.guard(self.episode), methods=["GET"]),
        ]

    def guard(self, handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            if not self.authorized(request):
                return JSONResponse(
                    {"error": "missing or wrong bearer token (the server's control-plane token)"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
            try:
                return await anyio.to_thread.run_sync(handler, request)
            except LookupError as exc:  # an unknown episode, or one closed meanwhile (EpisodeClosed)
                return _error(404, str(exc))

        return endpoint

    def info(self, request: Request) -> Response:
        return _json({"mode": "live", "runs": [], "poll_seconds": POLL_SECONDS})

    def list(self, request: Request) -> Response:
        out = []
        for episode in self.episodes.list():
            try:
                meta = episode.meta()
                verdict = meta.verdict
                calls = _calls(episode)
            except EpisodeClosed:  # deleted meanwhile
                continue
            out.append(
                {
                    "id": episode.id,
                    "world": meta.world,
                    "task": meta.task,
                    "seed": meta.seed,
                    "calls": calls,
                    "clock": meta.clock.isoformat(),
                    "ended": meta.ended,
                    "flagged": bool(meta.flags),
                    "passed": verdict.get("passed") if verdict else None,
                    "reward": verdict.get("reward") if verdict else None,
                }
            )
        return _json({"episodes": out})

    def episode(self, request: Request) -> Response:
        episode = self.episodes.get(request.path_params["episode_id"])
        meta = episode.meta()
        version = f"{_calls(episode)}.{int(meta.ended)}.{int(meta.verdict is not None)}"
        if request.query_params.get("since") == version:
            return _json({"unchanged": True, "version": version})
        stored = meta.verdict
        verdict = shown(load_verdict(stored), self.detail).model_dump(mode="json") if stored is not None else None
        data = episode_json(episode_trajectory(episode, verdict=verdict))
        data["version"] = version
        data["live"] = {"ended": meta.ended, "clock": meta.clock.isoformat(), "flags": list(meta.flags)}
        return _json(data)


def _calls(episode: Episode) -> int:
    """Calls in the episode's transcript (refused ones too); a parked episode stays parked."""
    return episode.call_counts()[0]


def live_viewer(episodes: Episodes, authorized: Callable[[Request], bool], detail: VerdictDetail) -> Starlette:
    """The app mounted at `/ui` by `mcpsim serve --http`: the page, and the live episodes' JSON
    behind `authorized`. `/ui` itself redirects to `/ui/`, where the page's relative URLs work."""
    return Starlette(routes=[*_page_routes(), *LivePages(episodes, authorized, detail).routes()])
