"""Run by tests/clients/test_adapter_trl.py with the python of a venv holding TRL, torch (CPU) and the
light client (not mcpsim): GRPO with mcpsim episodes as TRL environments and mcpsim's verifier as
the reward, a few steps on a tiny randomly initialised Qwen3-shaped model with a tokenizer trained
here (no download); prints one JSON report.

usage: python adapter_trl_probe.py MCPSIM_URL TOKEN OUTPUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import trl
from datasets import Dataset
from mcpsim_client.adapters.trl import MCPSimTRL
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
from trl import GRPOConfig, GRPOTrainer

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"]
SPECIAL += ["<tool_response>", "</tool_response>"]
TASKS = ["gift-card-balance", "delivery-date-and-carrier"]


def tokenizer(corpus: list[str]) -> PreTrainedTokenizerFast:
    """A small byte-level BPE trained on the prompts, with Qwen3's chat template (shipped by TRL)."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=4000, special_tokens=SPECIAL))
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tok.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()
    return tok


ADDRESS = {"line1": "88 Harbor View Rd", "line2": "Apt 12", "city": "Traverse City", "state": "MI", "zip": "49684"}
ASK = "I will add 88 Harbor View Rd, Apt 12 as your default address. Shall I go ahead?"
DONE = [{"role": "assistant", "content": "Done: 88 Harbor View Rd, Apt 12 is your default address now."}]


def dialogue(url: str, token: str) -> dict:
    """A task whose rubric needs the user's go-ahead, driven by hand through the environment TRL
    would call: asked with `send_message_to_user`, then the write, then the answer (1.0); the
    same without asking, or doing nothing (0.0); cut mid-tool-call (step_limit); a failed call."""
    tools = ["find_customer_by_email", "add_customer_address"]
    mcpsim = MCPSimTRL(url, token, "retail", tasks=["add-address-make-default"], tools=tools)
    offered = sorted(mcpsim.tool_names)
    extra: dict[str, list] = {}
    metrics: dict[str, float] = {}

    def log_extra(column: str, values: list) -> None:
        extra[column] = values

    def rollout(ask: bool, act: bool, completion: list[dict]) -> tuple[float, str | None, dict, str | None]:
        env = mcpsim.environment()
        env.reset(task="add-address-make-default")
        reply = None
        if act:
            env.find_customer_by_email(email="derek.smith@yahoo.com")
            reply = env.send_message_to_user(message=ASK) if ask else None
            env.add_customer_address(customer_id="cus_3673453", **ADDRESS, make_default=True)
        (reward,) = mcpsim.reward([completion], [env], log_extra=log_extra, log_metric=metrics.__setitem__)
        return reward, env.ending, env.info, reply

    right = rollout(True, True, DONE)
    unasked = rollout(False, True, DONE)
    nothing = rollout(False, False, DONE)
    cut = rollout(True, True, [{"role": "assistant", "tool_calls": [{"function": {"name": "x"}}]}])
    env = mcpsim.environment()
    env.reset(task="add-address-make-default")
    mcpsim.client.delete(env.episode)  # the episode is gone: the next call fails
    failed_call = env.find_customer_by_email(email="derek.smith@yahoo.com")
    (failed,) = mcpsim.reward([DONE], [env])
    return {
        "dialogue_offered": offered,
        "dialogue_user": right[3],
        "dialogue": right[:3],
        "unasked": unasked[:2],
        "nothing": nothing[:2],
        "cut": cut[:3],
        "failed": [failed, env.ending, env.info, failed_call],
        "log_extra": extra,
        "log_metric": metrics,
    }


def main(url: str, token: str, out: str) -> dict:
    every = MCPSimTRL(url, token, "retail", tasks=TASKS).tool_names
    mcpsim = MCPSimTRL(url, token, "retail", tasks=TASKS, tools=["find_customer_by_email", "get_customer_details"])
    others = {e.id for e in mcpsim.client.episodes()}  # the server is shared with other tests' episodes
    rows = mcpsim.dataset()
    tools = [getattr(mcpsim.environment_class, name) for name in ("find_customer_by_email", "get_customer_details")]
    tok = tokenizer([json.dumps(rows)] * 4 + [t.__doc__ or "" for t in tools] + ["<tool_call>", "</tool_call>"])
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=32768,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    model = Qwen3ForCausalLM(config)
    before = [p.detach().clone() for p in model.parameters()]
    args = GRPOConfig(
        output_dir=out,
        max_steps=2,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=16,
        learning_rate=1e-2,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    mcpsim.stop_token_ids = {tok.eos_token_id, tok.pad_token_id}  # as MCPSimTRL(..., stop_token_ids=[...])
    trainer = GRPOTrainer(
        model=model,
        processing_class=tok,
        args=args,
        train_dataset=Dataset.from_list(rows),
        environment_factory=mcpsim.environment,
        reward_funcs=[mcpsim.reward],
    )
    offered = sorted(t.__name__ for t in trainer.tools)
    trainer.train()
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    truncated = [h["mcpsim_truncated"] for h in trainer.state.log_history if "mcpsim_truncated" in h]
    endings = list(trainer._logs["extra"]["mcpsim_ending"])
    changed = any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters(), strict=True))

    # the objects TRL calls, driven by hand: a rollout that does the task gets mcpsim's 1.0
    env = mcpsim.environment()
    env.reset(task="gift-card-balance")
    found = json.loads(env.find_customer_by_email(email="matthew_murphy198@gmail.com"))
    details = env.get_customer_details(customer_id=found["customer_id"])
    right = mcpsim.reward([[{"role": "assistant", "content": "You have $329.73 left on your gift card."}]], [env])
    env.reset(task="gift-card-balance")
    wrong = mcpsim.reward([[{"role": "assistant", "content": "You have $12.00 left."}]], [env])
    return {
        "truncated": truncated,
        "endings": endings,
        **dialogue(url, token),
        "steps": trainer.state.global_step,
        "rewards": rewards,
        "weights_changed": changed,
        "offered": offered,
        "every": every,
        "found": found["customer_id"],
        "details_has_balance": "329.73" in details,
        "right": right,
        "wrong": wrong,
        "left_over": [e.id for e in mcpsim.client.episodes() if e.id not in others],
    }


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
