#!/usr/bin/env python3
"""Checks a `sparring export --format all` folder with the tools the files are for.

Usage: check_exports.py DIR [--trl-sft FILE]... [--rows FILE] [--allow-empty]

DIR is a `sparring export --format all` folder; each `--trl-sft FILE` is one
more trl-sft file to check (e.g. written with `--mask last-exchange`);
`--allow-empty` accepts formats whose cut kept nothing (real runs may have
no preference pairs); `--rows FILE` is the rows file the folder was exported
from, to check that `load_dataset` returns every `world_seed` exactly.

- `datasets.load_dataset` reads every config of the folder (its README lists
  them) and every JSONL file on its own; tool-call arguments come back as the
  objects written, with no keys added.
- The Parquet split has typed columns: `messages` a list of structs, `reward`
  a float, `tools` and tool-call `arguments` parsed JSON.
- trl-* files: transformers' `apply_chat_template` with the training chat
  template bundled in the installed `trl` package (`qwen3_training.jinja`,
  which has `{% generation %}` markers) and a BPE tokenizer trained here on the
  files' own text renders every row; SFT rows get a non-empty assistant mask
  that covers the agent's text and nothing of the person's; arguments render
  as JSON objects, never as a JSON string.
- openai-* files pass a checker of OpenAI's documented rules: the fine-tuning
  guide's keys only (the trace is in the `<file>.index.jsonl` sidecar, one
  entry per line), the cookbook checker's message rules, no empty assistant
  message trained, DPO outputs text only.
- The trained part of trl-dpo and trl-kto lines is agent turns only.
- The dataset card carries the Hub's recommended metadata.

Prints one line per check and exits 1 on the first failure.
"""

import importlib.util
import json
import os
import sys

import datasets
import transformers
from compat_common import Failure, need, read_jsonl, run
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
from transformers import PreTrainedTokenizerFast

JSONL_CONFIGS = ["openai-sft", "openai-dpo", "trl-sft", "trl-dpo", "trl-reward", "trl-kto", "trl-grpo"]
TRACE = ("row_id", "task_id", "reward")
# The top-level keys OpenAI's fine-tuning guides document, per format.
OPENAI_KEYS = {
    "openai-sft": {"messages", "tools", "parallel_tool_calls"},
    "openai-dpo": {"input", "preferred_output", "non_preferred_output"},
}
# The Hub's dataset-card docs: recommended metadata, and the size buckets.
CARD_KEYS = ("license", "language", "task_categories", "size_categories", "pretty_name")
SIZE_CATEGORIES = ["n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M",
                   "100M<n<1B", "1B<n<10B", "10B<n<100B", "100B<n<1T", "n>1T"]


# ---------------------------------------------------------------- OpenAI rules

def check_index(name, lines, index):
    """The sidecar `<file>.index.jsonl`: one entry per line, in order, with the trace."""
    need(len(index) == len(lines), f"{name}: the sidecar has {len(index)} entries for {len(lines)} lines")
    for n, entry in enumerate(index, 1):
        need(entry.get("line") == n, f"{name} sidecar entry {n}: line {entry.get('line')!r}")
        for k in TRACE:
            need(k in entry, f"{name} sidecar entry {n}: keeps {k}")


def empty_agent(m):
    return m.get("role") == "assistant" and not (m.get("content") or "").strip() and not m.get("tool_calls")


def check_openai_messages(messages, where, weights_allowed):
    need(isinstance(messages, list) and messages, f"{where}: messages is a non-empty list")
    open_calls = []
    for i, m in enumerate(messages):
        at = f"{where} message {i}"
        role = m.get("role")
        need(role in ("system", "user", "assistant", "tool"), f"{at}: role {role!r}")
        allowed = {"role", "content"}
        if role == "assistant":
            allowed |= {"tool_calls", "weight"} if weights_allowed else {"tool_calls"}
        if role == "tool":
            allowed |= {"tool_call_id"}
        need(set(m) <= allowed, f"{at}: unknown keys {sorted(set(m) - allowed)}")
        if "weight" in m:
            need(m["weight"] in (0, 1), f"{at}: weight {m['weight']!r} is 0 or 1")
        if role in ("system", "user"):
            need(isinstance(m.get("content"), str), f"{at}: content is a string")
        if role == "assistant":
            calls = m.get("tool_calls") or []
            need(isinstance(m.get("content"), str) or calls, f"{at}: content or tool_calls")
            need(not open_calls, f"{at}: tool calls {open_calls} were not all answered")
            for c in calls:
                need(c.get("type") == "function", f"{at}: tool call type is function")
                need(isinstance(c.get("id"), str) and c["id"], f"{at}: tool call id")
                fn = c.get("function", {})
                need(isinstance(fn.get("name"), str), f"{at}: function name")
                args = fn.get("arguments")
                need(isinstance(args, str), f"{at}: arguments are a JSON string")
                json.loads(args)
                open_calls.append(c["id"])
        if role == "tool":
            need(isinstance(m.get("content"), str), f"{at}: tool content is a string")
            tid = m.get("tool_call_id")
            need(tid in open_calls, f"{at}: tool_call_id {tid!r} answers an open call {open_calls}")
            open_calls.remove(tid)
    return open_calls


def check_openai_tools(tools, where):
    need(isinstance(tools, list), f"{where}: tools is a list")
    for t in tools:
        need(t.get("type") == "function", f"{where}: tool type is function")
        fn = t.get("function", {})
        need(isinstance(fn.get("name"), str), f"{where}: tool has a name")
        need(isinstance(fn.get("parameters"), dict), f"{where}: tool has parameters")


def check_openai_sft(lines):
    for n, line in enumerate(lines, 1):
        where = f"openai-sft line {n}"
        need(set(line) <= OPENAI_KEYS["openai-sft"], f"{where}: undocumented keys {sorted(set(line) - OPENAI_KEYS['openai-sft'])}")
        msgs = line["messages"]
        # The cookbook checker's rules: roles known, content or a call on
        # every message, an assistant message present.
        need(any(m["role"] == "assistant" for m in msgs), f"{where}: has an assistant message")
        for m in msgs:
            need(not (m.get("weight") == 1 and empty_agent(m)), f"{where}: an empty assistant message is trained")
        open_calls = check_openai_messages(msgs, where, weights_allowed=True)
        need(not open_calls, f"{where}: unanswered tool calls at the end")
        need(msgs[-1]["role"] == "assistant", f"{where}: ends with an assistant message")
        need(any(m.get("weight") == 1 for m in msgs), f"{where}: some assistant message is trained")
        need(all("weight" in m for m in msgs if m["role"] == "assistant"), f"{where}: every assistant message has a weight")
        if "tools" in line:
            check_openai_tools(line["tools"], where)


def check_openai_dpo(lines):
    for n, line in enumerate(lines, 1):
        where = f"openai-dpo line {n}"
        need(set(line) <= OPENAI_KEYS["openai-dpo"], f"{where}: undocumented keys {sorted(set(line) - OPENAI_KEYS['openai-dpo'])}")
        need(set(line["input"]) <= {"messages", "tools", "parallel_tool_calls"}, f"{where}: input keys")
        open_calls = check_openai_messages(line["input"]["messages"], where + " input", weights_allowed=False)
        need(not open_calls, f"{where}: input leaves tool calls unanswered")
        need(line["input"]["messages"][-1]["role"] in ("user", "tool"), f"{where}: input ends with user or tool")
        if "tools" in line["input"]:
            check_openai_tools(line["input"]["tools"], where)
        for side in ("preferred_output", "non_preferred_output"):
            out = line[side]
            need(isinstance(out, list) and len(out) == 1, f"{where}: {side} is one message")
            need(out[0]["role"] == "assistant", f"{where}: {side} is an assistant message")
            check_openai_messages(out, f"{where} {side}", weights_allowed=False)
            # The DPO guide: text outputs only.
            need(not out[0].get("tool_calls") and isinstance(out[0].get("content"), str) and out[0]["content"].strip(),
                 f"{where}: {side} is a text message: {out[0]}")
        need(line["preferred_output"] != line["non_preferred_output"], f"{where}: the sides differ")


# ---------------------------------------------------------------- datasets

def strip_none(value):
    """What a file's object looks like after a round trip that may add None."""
    if isinstance(value, dict):
        return {k: strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_none(v) for v in value]
    return value


def tool_arguments(messages):
    return [c["function"]["arguments"] for m in messages or [] for c in (m.get("tool_calls") or [])]


def check_loaded_jsonl(name, path, lines):
    ds = datasets.load_dataset("json", data_files=path, split="train")
    need(len(ds) == len(lines), f"{name}: load_dataset reads {len(lines)} rows, got {len(ds)}")
    for k in TRACE:
        # The OpenAI files keep their trace in the sidecar.
        need((k in ds.column_names) != name.startswith("openai"), f"{name}: column {k}")
    for i, (loaded, written) in enumerate(zip(ds, lines)):
        for col in ("messages", "prompt", "completion", "chosen", "rejected"):
            if col in written and not name.startswith("openai"):
                got = tool_arguments(loaded[col])
                want = tool_arguments(written[col])
                need(got == want, f"{name} row {i}: {col} tool-call arguments survive load_dataset unchanged ({got} vs {want})")
                for m in loaded[col]:
                    for c in m.get("tool_calls") or []:
                        need(isinstance(c["function"]["arguments"], dict), f"{name} row {i}: arguments load as objects")
    return ds


def check_card(folder, present):
    from huggingface_hub import DatasetCard

    names = datasets.get_dataset_config_names(folder)
    need(names == ["default"], f"the folder has one config (the Parquet rows), got {names}")
    data = DatasetCard.load(os.path.join(folder, "README.md")).data.to_dict()
    for k in CARD_KEYS:
        need(data.get(k), f"the card has {k}: {sorted(data)}")
    need(all(c in SIZE_CATEGORIES for c in data["size_categories"]), f"size_categories {data['size_categories']}")
    with open(os.path.join(folder, "README.md"), encoding="utf-8") as f:
        card = f.read()
    for c in present:
        need(f"{c}/train-00000-of-00001.jsonl" in card, f"README names the {c} file")


def check_parquet(folder):
    ds = datasets.load_dataset(folder)
    need(set(ds.keys()) == {"train", "holdout"}, f"parquet splits {sorted(ds.keys())}")
    train = ds["train"]
    need(len(train) > 0, "parquet train split has rows")
    f = train.features
    need(f["reward"].dtype == "float64", f"reward is float64, got {f['reward']}")
    need(f["row_id"].dtype == "string" and f["task_id"].dtype == "string", "row_id, task_id are strings")
    need(f["world_seed"].dtype == "uint64", f"world_seed is uint64, got {f['world_seed']}")
    msg = f["messages"]
    inner = msg.feature if hasattr(msg, "feature") else msg[0]
    need(isinstance(inner, dict) and {"role", "content", "tool_calls"} <= set(inner), f"messages are typed structs: {msg}")
    task_train = set(train["task_id"])
    task_hold = set(ds["holdout"]["task_id"])
    need(not (task_train & task_hold), "no task straddles the splits")
    seen_call = False
    for row in train:
        for m in row["messages"]:
            for c in m.get("tool_calls") or []:
                need(isinstance(c["function"]["arguments"], dict), "parquet arguments read back as objects")
                seen_call = True
        need(isinstance(row["tools"], list) and all(isinstance(t, dict) for t in row["tools"]), "tools read back as objects")
    need(seen_call, "parquet rows include tool calls")
    return ds


# ---------------------------------------------------------------- chat templates

def trl_template(name):
    spec = importlib.util.find_spec("trl")
    need(spec is not None and spec.submodule_search_locations, "the trl package is installed")
    path = os.path.join(list(spec.submodule_search_locations)[0], "chat_templates", name)
    need(os.path.exists(path), f"trl ships {name}")
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def texts_of(value, out):
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            texts_of(v, out)
    elif isinstance(value, list):
        for v in value:
            texts_of(v, out)


def build_tokenizer(corpus):
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>",
               "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=800, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")


# The second template double-encodes arguments given as a string, so it
# catches the wrong dialect; qwen3 accepts both.
SECOND_TEMPLATE = "qwen2_5_training.jinja"
TEMPLATES = {}


def render(tokenizer, messages, tools, where, **kw):
    text = None
    for template in (None, TEMPLATES["second"]):
        text = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False,
                                             chat_template=template, **kw)
        need(isinstance(text, str) and text, f"{where}: renders")
        need('"arguments": "' not in text, f"{where}: arguments render as objects, not strings")
    return text


def assistant_mask(tokenizer, messages, tools, where):
    out = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    mask = out["assistant_masks"]
    ids = out["input_ids"]
    need(len(mask) == len(ids), f"{where}: one mask entry per token")
    need(sum(mask) > 0, f"{where}: non-empty assistant mask")
    trained = tokenizer.decode([t for t, m in zip(ids, mask) if m])
    untrained = tokenizer.decode([t for t, m in zip(ids, mask) if not m])
    return trained, untrained


def check_trl(name, ds, tokenizer):
    rows = 0
    for i, row in enumerate(ds):
        where = f"{name} row {i}"
        tools = row.get("tools")
        if name == "trl-sft":
            if row.get("messages") is not None:
                msgs = row["messages"]
                trained, untrained = assistant_mask(tokenizer, msgs, tools, where)
                render(tokenizer, msgs, tools, where)
                for m in msgs:
                    if m["role"] == "assistant" and m["content"]:
                        need(m["content"] in trained, f"{where}: agent text is in the mask")
                    if m["role"] == "user":
                        need(m["content"] not in trained, f"{where}: person text is not in the mask")
            else:
                full = row["prompt"] + row["completion"]
                trained, _ = assistant_mask(tokenizer, full, tools, where)
                for m in row["completion"]:
                    if m["role"] == "assistant" and m["content"]:
                        need(m["content"] in trained, f"{where}: completion text is in the mask")
                render(tokenizer, row["prompt"], tools, where, add_generation_prompt=True)
        elif name in ("trl-dpo", "trl-reward"):
            need(row["prompt"][-1]["role"] in ("user", "tool"), f"{where}: prompt ends with user or tool")
            if name == "trl-dpo":
                for side in ("chosen", "rejected"):
                    need([m["role"] for m in row[side]] == ["assistant"], f"{where}: {side} is one agent turn (DPO trains all of it)")
                    need(not empty_agent(row[side][0]), f"{where}: {side} is not empty")
            render(tokenizer, row["prompt"], tools, where, add_generation_prompt=True)
            for side in ("chosen", "rejected"):
                need(row[side] and row[side][0]["role"] == "assistant", f"{where}: {side} starts with the agent")
                render(tokenizer, row["prompt"] + row[side], tools, f"{where} {side}")
            need(isinstance(row["margin"], float), f"{where}: margin is a float")
        elif name == "trl-kto":
            need(isinstance(row["label"], bool), f"{where}: label is a bool")
            need([m["role"] for m in row["completion"]] == ["assistant"], f"{where}: the completion is one agent turn (KTO trains all of it)")
            need(not empty_agent(row["completion"][0]), f"{where}: the completion is not empty")
            render(tokenizer, row["prompt"], tools, where, add_generation_prompt=True)
            render(tokenizer, row["prompt"] + row["completion"], tools, where)
        elif name == "trl-grpo":
            need(set(row) >= {"prompt", "task_id", "world_seed", "situation", "row_id", "reward"}, f"{where}: columns {sorted(row)}")
            need(isinstance(row["world_seed"], str) and int(row["world_seed"]) >= 0, f"{where}: world_seed is a string of the seed: {row['world_seed']!r}")
            json.loads(row["situation"])
            render(tokenizer, row["prompt"], None, where, add_generation_prompt=True)
        rows += 1
    return rows


def main():
    args = sys.argv[1:]
    folder = args.pop(0)
    allow_empty = "--allow-empty" in args
    extra_sft = [args[i + 1] for i, a in enumerate(args) if a == "--trl-sft"]
    rows_file = next((args[i + 1] for i, a in enumerate(args) if a == "--rows"), None)
    print(f"datasets {datasets.__version__}, transformers {transformers.__version__}")
    files = {c: os.path.join(folder, c, "train-00000-of-00001.jsonl") for c in JSONL_CONFIGS}
    lines = {c: read_jsonl(p) if os.path.exists(p) else [] for c, p in files.items()}
    for c, ls in lines.items():
        need(ls or allow_empty, f"{c}: the export has rows (the fixture must exercise every cut)")
        need(ls or not os.path.exists(files[c]), f"{c}: an empty cut leaves no file (datasets cannot load it)")
    present = [c for c in JSONL_CONFIGS if lines[c]]

    for c in ("openai-sft", "openai-dpo"):
        index = files[c] + ".index.jsonl"
        need(os.path.exists(index) == bool(lines[c]), f"{c}: a sidecar beside the file")
        if lines[c]:
            check_index(c, lines[c], read_jsonl(index))
    check_openai_sft(lines["openai-sft"])
    print(f"ok openai-sft: {len(lines['openai-sft'])} lines pass the documented rules")
    check_openai_dpo(lines["openai-dpo"])
    print(f"ok openai-dpo: {len(lines['openai-dpo'])} lines pass the documented rules")

    loaded = {}
    for c in present:
        loaded[c] = check_loaded_jsonl(c, files[c], lines[c])
        print(f"ok {c}: load_dataset('json') reads {len(loaded[c])} rows")
    check_card(folder, present)
    print("ok folder: README config, recommended metadata and file list")
    if rows_file and "trl-grpo" in loaded:
        seeds = {r["row_id"]: r["situation"]["world_seed"] for r in read_jsonl(rows_file)}
        got = loaded["trl-grpo"]
        need(got.features["world_seed"].dtype == "string", f"world_seed loads as a string column: {got.features['world_seed']}")
        for row in got:
            want = seeds[row["row_id"]]
            need(int(row["world_seed"]) == want, f"trl-grpo {row['row_id']}: world_seed {row['world_seed']!r} is not {want}")
        big = sum(1 for row in got if int(row["world_seed"]) >= 2**63)
        print(f"ok trl-grpo: load_dataset returns every world_seed exactly ({len(got)} rows, {big} at or above 2^63)")
    pq = check_parquet(folder)
    print(f"ok parquet: train {len(pq['train'])} / holdout {len(pq['holdout'])} rows, typed columns")

    template, path = trl_template("qwen3_training.jinja")
    corpus = []
    for c in JSONL_CONFIGS:
        texts_of(lines[c], corpus)
    tokenizer = build_tokenizer(corpus)
    tokenizer.chat_template = template
    TEMPLATES["second"], second = trl_template(SECOND_TEMPLATE)
    print(f"templates {path}, {second}; tokenizer vocab {len(tokenizer)}")
    for c in ("trl-sft", "trl-dpo", "trl-reward", "trl-kto", "trl-grpo"):
        if c not in loaded:
            print(f"-- {c}: empty cut, nothing to render")
            continue
        n = check_trl(c, loaded[c], tokenizer)
        print(f"ok {c}: {n} rows render with the trl training template")
    for path in extra_sft:
        ls = read_jsonl(path)
        need(ls, f"{path}: has rows")
        ds = check_loaded_jsonl("trl-sft", path, ls)
        n = check_trl("trl-sft", ds, tokenizer)
        print(f"ok {path}: {n} rows load and render")
    print("all export checks passed")


if __name__ == "__main__":
    run(main)
