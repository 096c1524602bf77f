#!/usr/bin/env python3
"""One training step of TRL's own trainers on each TRL export, on CPU, offline.

Usage: train_trl.py DIR --trl-sft FILE --rows FILE

DIR is a `sparring export --format all` folder; `--trl-sft FILE` a trl-sft file
written with `--mask last-exchange`; `--rows FILE` the rows the folder was
exported from. Nothing is downloaded: the model is a tiny randomly initialised
Qwen2 (one layer, hidden size 32) built here, and the tokenizer a byte-level BPE
trained on the files' own text with trl's `qwen3_training.jinja` template.

- trl-sft (both files): `SFTTrainer` with `SFTConfig(assistant_only_loss=True)`,
  the setting docs/export.md names. Its prepared dataset's labels are checked
  token by token: every labelled token lies inside an agent turn, no text of a
  tool result or of the person is labelled, and each agent reply is.
- trl-dpo, trl-kto, trl-reward: `DPOTrainer`, `KTOTrainer`, `RewardTrainer`.
- trl-grpo: `GRPOTrainer` with a reward function that reads the `world_seed`
  column TRL hands it and checks that every value is the row's seed exactly.

Each trainer takes one optimiser step; the loss must be finite. Prints one line
per trainer and exits 1 on the first failure.
"""

import copy
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_exports import JSONL_CONFIGS, build_tokenizer, texts_of, trl_template  # noqa: E402
from compat_common import need, read_jsonl, run  # noqa: E402

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datasets  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402

torch.manual_seed(0)


def tiny_config(tokenizer, **kw):
    return transformers.Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, **kw)


def causal_lm(tokenizer):
    return transformers.Qwen2ForCausalLM(tiny_config(tokenizer))


def common(out, **kw):
    return dict(output_dir=out, max_steps=1, per_device_train_batch_size=2, learning_rate=1e-3,
                report_to=[], logging_steps=1, save_strategy="no", use_cpu=True, seed=0,
                dataloader_num_workers=0, **kw)


def loss_of(trainer):
    result = trainer.train()
    loss = result.training_loss
    need(isinstance(loss, float) and math.isfinite(loss), f"{type(trainer).__name__}: finite loss, got {loss}")
    return loss


def load(path):
    return datasets.load_dataset("json", data_files=path, split="train")


def check_sft_labels(trainer, ds, tokenizer, where):
    """Every labelled token is the agent's: no tool result, no person text."""
    prepared = trainer.train_dataset
    need("labels" in prepared.column_names or "assistant_masks" in prepared.column_names,
         f"{where}: the prepared dataset has labels: {prepared.column_names}")
    checked = 0
    for i, (row, prep) in enumerate(zip(ds, prepared)):
        ids = prep["input_ids"]
        if "labels" in prep:
            mask = [label != -100 for label in prep["labels"]]
        else:
            mask = [bool(m) for m in prep["assistant_masks"]]
            if "completion_mask" in prep:
                mask = [a and bool(c) for a, c in zip(mask, prep["completion_mask"])]
        need(any(mask), f"{where} row {i}: some token is trained")
        trained = tokenizer.decode([t for t, m in zip(ids, mask) if m])
        messages = row["messages"] if row.get("messages") is not None else row["prompt"] + row["completion"]
        agent_text = " ".join(m["content"] or "" for m in messages if m["role"] == "assistant")
        for m in messages:
            text = (m["content"] or "").strip()
            if m["role"] in ("tool", "user", "system") and len(text) >= 8 and text not in agent_text:
                need(text not in trained, f"{where} row {i}: {m['role']} text is trained: {text[:60]!r}")
        trained_part = row["messages"] if row.get("messages") is not None else row["completion"]
        for m in trained_part:
            if m["role"] == "assistant" and m["content"]:
                need(m["content"] in trained, f"{where} row {i}: agent text is trained: {m['content'][:60]!r}")
        checked += 1
    return checked


def train_sft(path, tokenizer, where, work):
    ds = load(path)
    args = trl.SFTConfig(**common(os.path.join(work, where), assistant_only_loss=True, max_length=4096))
    trainer = trl.SFTTrainer(model=causal_lm(tokenizer), args=args, train_dataset=ds, processing_class=tokenizer)
    n = check_sft_labels(trainer, ds, tokenizer, where)
    loss = loss_of(trainer)
    print(f"ok {where}: SFTTrainer(assistant_only_loss=True) labels only agent tokens on {n} rows; one step, loss {loss:.3f}")


def main():
    args = sys.argv[1:]
    folder = args.pop(0)
    extra_sft = args[args.index("--trl-sft") + 1]
    rows_file = args[args.index("--rows") + 1]
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}, datasets {datasets.__version__}")
    files = {c: os.path.join(folder, c, "train-00000-of-00001.jsonl") for c in JSONL_CONFIGS}
    for c in ("trl-sft", "trl-dpo", "trl-kto", "trl-reward", "trl-grpo"):
        need(os.path.exists(files[c]), f"{c}: the folder has the file")
    corpus = []
    for c in JSONL_CONFIGS:
        texts_of(read_jsonl(files[c]), corpus)
    texts_of(read_jsonl(extra_sft), corpus)
    tokenizer = build_tokenizer(corpus)
    tokenizer.chat_template, _ = trl_template("qwen3_training.jinja")
    work = tempfile.mkdtemp(prefix="sparring-trl-")

    train_sft(files["trl-sft"], tokenizer, "trl-sft", work)
    train_sft(extra_sft, tokenizer, "trl-sft --mask last-exchange", work)

    # The reference models are passed in: TRL would load them by model id.
    policy = causal_lm(tokenizer)
    dpo = trl.DPOTrainer(
        model=policy,
        ref_model=copy.deepcopy(policy),
        args=trl.DPOConfig(**common(os.path.join(work, "dpo"), max_length=4096)),
        train_dataset=load(files["trl-dpo"]), processing_class=tokenizer)
    print(f"ok trl-dpo: DPOTrainer one step, loss {loss_of(dpo):.3f}")

    kto_ds = load(files["trl-kto"])
    labels = set(kto_ds["label"])
    need(labels == {True, False}, f"trl-kto has desirable and undesirable rows: {labels}")
    policy = causal_lm(tokenizer)
    kto = trl.KTOTrainer(
        model=policy,
        ref_model=copy.deepcopy(policy),
        args=trl.KTOConfig(**common(os.path.join(work, "kto"), max_length=4096)),
        train_dataset=kto_ds, processing_class=tokenizer)
    print(f"ok trl-kto: KTOTrainer one step, loss {loss_of(kto):.3f}")

    reward_model = transformers.Qwen2ForSequenceClassification(tiny_config(tokenizer, num_labels=1))
    reward = trl.RewardTrainer(
        model=reward_model,
        args=trl.RewardConfig(**common(os.path.join(work, "reward"), max_length=4096)),
        train_dataset=load(files["trl-reward"]), processing_class=tokenizer)
    print(f"ok trl-reward: RewardTrainer one step, loss {loss_of(reward):.3f}")

    seeds = {r["row_id"]: r["situation"]["world_seed"] for r in read_jsonl(rows_file)}
    seen = []

    def seed_exact(prompts, completions, row_id, world_seed, **_):
        # TRL passes every extra column to reward functions.
        for rid, ws in zip(row_id, world_seed):
            need(int(ws) == seeds[rid], f"trl-grpo: the reward function got world_seed {ws!r}, not {seeds[rid]}")
            seen.append(int(ws))
        return [0.0] * len(prompts)

    grpo = trl.GRPOTrainer(
        model=causal_lm(tokenizer),
        reward_funcs=seed_exact,
        args=trl.GRPOConfig(**common(os.path.join(work, "grpo"), num_generations=2, max_completion_length=8,
                                     generation_batch_size=2)),
        train_dataset=load(files["trl-grpo"]), processing_class=tokenizer)
    loss_of(grpo)
    need(seen, "trl-grpo: the reward function was called")
    need(any(s >= 2**63 for s in seen), f"trl-grpo: the fixture's seeds at or above 2^63 reach the reward function: {seen}")
    print(f"ok trl-grpo: GRPOTrainer one step; the reward function got {len(seen)} world_seed values, "
          f"all exact ({sum(1 for s in seen if s >= 2**63)} at or above 2^63)")
    print("all trainers took a step")


if __name__ == "__main__":
    run(main)
