"""Run by tests/clients/test_adapter_skyrl.py with the python of a venv holding `skyrl-gym` and the light
client (not mcpsim): makes the registered `mcpsim` environment with skyrl_gym.make and plays
scripted model outputs (text with <tool_call> blocks) through init/step; prints one JSON report.

usage: python adapter_skyrl_probe.py MCPSIM_URL
"""

from __future__ import annotations

import json
import sys

import skyrl_gym
from mcpsim_client.adapters.skyrl import register

LOOKUP = (
    '<tool_call>\n{"name": "find_customer_by_email", "arguments": {"email": "matthew_murphy198@gmail.com"}}\n'
    "</tool_call>"
)
DETAILS = '<tool_call>{"name": "get_customer_details", "arguments": {"customer_id": "cus_1148152"}}</tool_call>'


def _between(text: str, start: str, end: str) -> list[str]:
    return text.split(start, 1)[1].split(end, 1)[0].strip().splitlines()


# a task whose rubric needs the user's go-ahead before the write: asked through the user route
ADDRESS = {"line1": "88 Harbor View Rd", "line2": "Apt 12", "city": "Traverse City", "state": "MI", "zip": "49684"}
DIALOGUE = [
    '<tool_call>{"name": "find_customer_by_email", "arguments": {"email": "derek.smith@yahoo.com"}}</tool_call>',
    "I will add 88 Harbor View Rd, Apt 12, Traverse City, MI 49684 and make it your default address. "
    "Shall I go ahead? (yes/no)",
    "<tool_call>"
    + json.dumps(
        {
            "name": "add_customer_address",
            "arguments": {"customer_id": "cus_3673453", **ADDRESS, "make_default": True},
        }
    )
    + "</tool_call>",
    "Done: 88 Harbor View Rd, Apt 12 is now your default address.",
]


def play(url: str, actions: list[str], task: str = "gift-card-balance", vanish: bool = False, **config: object) -> dict:
    """`actions` played on a new environment; `vanish`: the episode is deleted after init."""
    env = skyrl_gym.make("mcpsim", env_config={"server": url, "world": "retail", **config}, extras={"task": task})
    prompt, meta = env.init([])
    if vanish:
        env.client.delete(env.episode)
    steps = [env.step(a) for a in actions]
    return {
        "roles": [m["role"] for m in prompt],
        "tools_in_prompt": [
            json.loads(line)["name"] for line in _between(prompt[0]["content"], "<tools>\n", "\n</tools>")
        ],
        "request": prompt[1]["content"],
        "mcp_url": meta["mcp_url"],
        "observations": [s["observations"][0]["content"] if s["observations"] else None for s in steps],
        "rewards": [s["reward"] for s in steps],
        "done": [s["done"] for s in steps],
        "metadata": steps[-1]["metadata"],
        "metrics": env.get_metrics(),
    }


def main(url: str) -> dict:
    register()
    right = play(url, [LOOKUP, DETAILS, "You have $329.73 left on your gift card."])
    wrong = play(url, [LOOKUP, "<tool_call>{not json</tool_call>", "You have $12.00 left."], reward="partial")
    capped = play(url, [LOOKUP, LOOKUP], max_turns=2)
    dialogue = play(url, DIALOGUE, task="add-address-make-default")
    unconfirmed = play(url, [DIALOGUE[0], DIALOGUE[2], DIALOGUE[3]], task="add-address-make-default")
    idle = play(url, [DIALOGUE[3]], task="add-address-make-default")
    failed = play(url, [LOOKUP], vanish=True)
    return {
        "right": right,
        "wrong": wrong,
        "capped": capped,
        "dialogue": dialogue,
        "unconfirmed": unconfirmed,
        "idle": idle,
        "failed": failed,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
