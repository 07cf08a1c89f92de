"""A toy "model" behind an OpenAI-compatible chat-completions endpoint, for trying `mcpsim run
--agent openai:toy` without a GPU. It is not a language model: it looks up what the user's first
message names (an email address, an order or reservation id...) with the first tool whose one
required argument takes it, then answers with what came back. It solves almost nothing, which is
the point: a real model's run looks the same, with better scores.

    python examples/toy_model.py --port 8001          # serves http://127.0.0.1:8001/v1

Standard library only; deterministic; binds 127.0.0.1. `--detach` returns once the endpoint
answers and leaves it running; `--idle-exit S` stops it after S seconds without a request.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# what a user's message may name, and the argument names that take it
VALUES = [
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), ("email",)),
    (re.compile(r"#?\b[A-Z]{1,4}\d{5,}\b|#[A-Z0-9]{4,}"), ("order_id", "reservation_id", "id")),
]


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for one chat-completions request."""
    messages = body.get("messages", [])
    results = [m for m in messages if m.get("role") == "tool"]
    if results:
        return {"role": "assistant", "content": "Here is what I found: " + str(results[-1].get("content"))[:300]}
    said = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    for tool in body.get("tools", []):
        function = tool.get("function", {})
        required = function.get("parameters", {}).get("required", [])
        if len(required) != 1:
            continue
        for pattern, names in VALUES:
            found = pattern.search(said)
            if found and required[0] in names:
                arguments = json.dumps({required[0]: found.group(0)})
                call = {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": function["name"], "arguments": arguments},
                }
                return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": "Sorry, I could not find anything to look up."}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_error(404, "only POST /v1/chat/completions")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > 10_000_000:
            self.send_error(413, "request over 10 MB")
            return
        body = json.loads(self.rfile.read(length) or b"{}")
        message = reply(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        answer = {
            "id": "chatcmpl-toy",
            "object": "chat.completion",
            "model": body.get("model", "toy"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the run prints its own progress


class Server(ThreadingHTTPServer):
    idle = False

    def handle_timeout(self) -> None:
        self.idle = True


def main() -> None:
    parser = argparse.ArgumentParser(description="A toy OpenAI-compatible endpoint on 127.0.0.1 (not a model).")
    parser.add_argument("--port", type=int, default=8001, help="the port (default 8001)")
    parser.add_argument("--idle-exit", type=float, default=0, help="stop after S seconds without a request (0: never)")
    parser.add_argument("--detach", action="store_true", help="run in the background; return once it listens")
    args = parser.parse_args()
    if args.detach:
        detach(args)
        return
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"toy model on http://127.0.0.1:{server.server_port}/v1 (pid {os.getpid()})", flush=True)
    if not args.idle_exit:
        server.serve_forever()
    server.timeout = args.idle_exit
    while not server.idle:  # handle_request returns after `timeout` seconds without a request
        server.handle_request()


def _toy_listening(port: int) -> bool:
    """Whether this toy endpoint answers on `port` (its chat route, with a request it accepts)."""
    body = json.dumps({"model": "toy", "messages": [{"role": "user", "content": "ping"}]}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return json.loads(answer.read()).get("id") == "chatcmpl-toy"
    except (OSError, ValueError):
        return False


def detach(args: argparse.Namespace) -> None:
    """Start this endpoint in its own session and return once it has printed that it listens; a toy
    model already listening on the port (an earlier --detach) is used as it is."""
    if _toy_listening(args.port):
        print(f"toy model already on http://127.0.0.1:{args.port}/v1")
        return
    command = [sys.executable, __file__, "--port", str(args.port), "--idle-exit", str(args.idle_exit)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if not line:
        raise SystemExit(f"the toy model did not start: {child.stderr.read() if child.stderr else ''}")
    print(line)


if __name__ == "__main__":
    main()
