"""Run by tests/clients/test_adapter_openenv.py with the python of a venv holding `openenv` and the light
client (not mcpsim): serves mcpsim episodes through OpenEnv's own server (create_app, uvicorn)
and drives them with OpenEnv's own client over its WebSocket sessions; prints one JSON report.

usage: python adapter_openenv_probe.py MCPSIM_URL TOKEN
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

import uvicorn
from mcpsim_client import Client
from mcpsim_client.adapters.openenv import create_mcpsim_app
from openenv.core.generic_client import GenericEnvClient

LOOKUP = {"tool_name": "find_customer_by_email", "arguments": {"email": "matthew_murphy198@gmail.com"}}
DETAILS = {"tool_name": "get_customer_details", "arguments": {"customer_id": "cus_1148152"}}


def serve(app) -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    for _ in range(600):
        if server.started:
            return f"http://127.0.0.1:{port}"
        time.sleep(0.05)
    raise RuntimeError("the OpenEnv server did not start")


def episode(url: str, answer: str) -> dict:
    report: dict = {}
    with GenericEnvClient(base_url=url).sync() as env:
        first = env.reset(task="gift-card-balance")
        obs = first.observation
        report["reset"] = {
            "task": obs["task_id"],
            "tools": len(obs["tools"]),
            "roles": [m["role"] for m in obs["messages"]],
            "done": first.done,
        }
        state = env.state()
        report["state_before"] = {k: state.get(k) for k in ("task_id", "world", "step_count", "mcp_url")}
        step = env.step(LOOKUP)
        report["lookup"] = {"error": step.observation["is_error"], "reward": step.reward, "done": step.done}
        report["lookup_result"] = json.loads(step.observation["result"])
        env.step(DETAILS)
        last = env.step({"message": answer})
        report["end"] = {
            "reward": last.reward,
            "done": last.done,
            "passed": last.observation["verdict"]["passed"],
            "partial": last.observation["verdict"]["partial_reward"],
        }
        report["end_metadata"] = last.observation["metadata"]
        state = env.state()
        report["state_after"] = {"step_count": state["step_count"], "verdict": state["verdict"] is not None}
        report["ending"] = state["ending"]
        try:
            env.step({"tool_name": "x", "message": "both"})
            report["bad_action"] = "accepted"
        except Exception as exc:
            report["bad_action"] = str(exc)[:300]
    return report


ADDRESS = {"line1": "88 Harbor View Rd", "line2": "Apt 12", "city": "Traverse City", "state": "MI", "zip": "49684"}


def dialogue(url: str) -> dict:
    """A task whose rubric needs the user's go-ahead: the question goes to the simulated user."""
    with GenericEnvClient(base_url=url).sync() as env:
        env.reset(task="add-address-make-default")
        env.step({"tool_name": "find_customer_by_email", "arguments": {"email": "derek.smith@yahoo.com"}})
        asked = env.step({"message": "I will add 88 Harbor View Rd, Apt 12 as your default address. Shall I go ahead?"})
        arguments = {"customer_id": "cus_3673453", **ADDRESS, "make_default": True}
        env.step({"tool_name": "add_customer_address", "arguments": arguments})
        last = env.step({"message": "Done: 88 Harbor View Rd, Apt 12 is your default address now."})
        return {
            "user": asked.observation["user_message"],
            "asked_done": asked.done,
            "reward": last.reward,
            "done": last.done,
            "roles": [m["role"] for m in last.observation["messages"]],
            "metadata": last.observation["metadata"],
        }


def idle(url: str) -> dict:
    """The same dialogue task, doing nothing: the answer ends it, graded 0."""
    with GenericEnvClient(base_url=url).sync() as env:
        env.reset(task="add-address-make-default")
        last = env.step({"message": "Done: your new address is your default now."})
        return {"reward": last.reward, "done": last.done, "metadata": last.observation["metadata"]}


def capped(url: str) -> dict:
    """An app whose episodes end after one step: cut, graded as they stood."""
    with GenericEnvClient(base_url=url).sync() as env:
        env.reset(task="gift-card-balance")
        last = env.step(LOOKUP)
        return {"reward": last.reward, "done": last.done, "metadata": last.observation["metadata"]}


def failed(url: str, mcpsim_url: str, token: str) -> dict:
    """The episode is deleted behind the session's back: the next step ends it, ungraded."""
    with GenericEnvClient(base_url=url).sync() as env:
        env.reset(task="gift-card-balance")
        episode_id = env.state()["mcp_url"].rstrip("/").split("/")[-2]
        with Client(mcpsim_url, token) as client:
            client.delete(episode_id)
        last = env.step(LOOKUP)
        return {
            "reward": last.reward,
            "done": last.done,
            "metadata": last.observation["metadata"],
            "ending": env.state()["ending"],
        }


def main(mcpsim_url: str, token: str) -> dict:
    url = serve(create_mcpsim_app(mcpsim_url, token, "retail"))
    short = serve(create_mcpsim_app(mcpsim_url, token, "retail", max_steps=1))
    return {
        "right": episode(url, "You have $329.73 left on your gift card."),
        "wrong": episode(url, "You have $12.00 left."),
        "dialogue": dialogue(url),
        "idle": idle(url),
        "capped": capped(short),
        "failed": failed(url, mcpsim_url, token),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
