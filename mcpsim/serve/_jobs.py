"""`POST /jobs`: N rollouts of a task set with a built-in agent, run by the server on its own
episodes, each result streamed back as one JSON line (NDJSON) as it finishes. The server layer
only reads the request and streams; what a job is and how its episodes run belongs to the layer
above (`mcpsim.runner._jobs.ServerJobs`), which whoever builds the app installs as the control
plane's `jobs` (`mcpsim serve --http` and `serve_on_ray`'s hosts do). Without one, the
route answers 404 with the reason."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mcpsim.serve._host import EpisodeManager
from mcpsim.serve._requests import HttpError

log = structlog.get_logger("mcpsim.serve._jobs")

Emit = Callable[[dict[str, Any]], Awaitable[None]]  # sends one result line


class JobRunner(Protocol):
    """What runs jobs for a server: `plan` checks a request's body (ValueError or LookupError
    with the reason: 422) and returns the job, `run` runs it on the server's episodes, emitting a
    line per finished rollout and a last summary line."""

    def plan(self, body: Any, manager: EpisodeManager) -> Any: ...

    async def run(self, job: Any, manager: EpisodeManager, emit: Emit) -> None: ...


async def job_response(
    runner: JobRunner | None, manager: EpisodeManager, read_json: Callable[[Request], Awaitable[Any]], request: Request
) -> Response:
    if runner is None:
        raise HttpError(404, "this server runs no jobs (its app was built without a job runner)")
    body = await read_json(request)
    try:
        job = runner.plan(body, manager)
    except (ValueError, LookupError) as exc:
        raise HttpError(422, str(exc).strip("'\"")) from None
    return _Streamed(lambda emit: runner.run(job, manager, emit))


class _Streamed(Response):
    """200 with `application/x-ndjson`: the lines `produce` emits, each sent as it comes; if it
    fails, a last line says why (`"error"`). When the client hangs up, `produce` is cancelled
    (its episodes end with it)."""

    media_type = "application/x-ndjson"

    def __init__(self, produce: Callable[[Emit], Awaitable[None]]) -> None:
        super().__init__(status_code=200, media_type=self.media_type)
        self.produce = produce

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sender, lines = anyio.create_memory_object_stream[bytes](16)

        async def emit(line: dict[str, Any]) -> None:
            await sender.send(json.dumps(line, separators=(",", ":")).encode() + b"\n")

        async def produce() -> None:
            async with sender:
                try:
                    await self.produce(emit)
                except Exception as exc:  # after the 200 went out: said in a last line, not a cut stream
                    log.exception("a job failed")
                    await emit({"done": True, "error": f"the job failed: {type(exc).__name__}: {exc}"[:500]})

        async def hung_up() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]  # its length is not known yet
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        async with anyio.create_task_group() as group:
            group.start_soon(produce)
            group.start_soon(hung_up)
            async with lines:
                async for chunk in lines:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            group.cancel_scope.cancel()
