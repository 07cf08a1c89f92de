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
