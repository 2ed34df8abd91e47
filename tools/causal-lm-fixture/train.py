"""Trains strata-tiny-gpt, a tiny byte-level causal LM used as a TEST FIXTURE (not a real LLM).

Vocabulary: the 256 byte values (id = byte) plus <|endoftext|> (id 256), which ends every paragraph of the
training text and also starts every sequence (GPT-2's convention), so p(<|endoftext|> | text so far) is a real
end-of-segment signal, as LGMGC §3.1 reads it from a real LLM.

Training text: README*/*.txt files under /usr/share/doc (Debian package documentation), read in sorted order;
every 10th file (by sorted position) is held out. Paragraphs are split on blank lines.

Writes into OUT (argument 1): model.onnx, model.pt (TorchScript), tokenizer.json, model.json, reference.json.
Deterministic for a given machine (fixed seed, one thread, fixed step count); the documentation present under
/usr/share/doc differs between machines, so the weights may too.
"""
import json
import math
import os
import re
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

EOS = 256
VOCAB = 257
CONTEXT = 128
LAYERS, DIM, HEADS = 2, 64, 4
STEPS, BATCH, LR = int(os.environ.get("STEPS", "700")), 16, 3e-3
TIME_LIMIT = float(os.environ.get("TIME_LIMIT", "600"))  # seconds of training at most
EOS_TOKEN = "<|endoftext|>"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.register_buffer("mask", torch.tril(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool)).view(1, 1, CONTEXT, CONTEXT),
                             persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(DIM, dim=2)
        q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // HEADS))
        att = att.masked_fill(~self.mask[:, :, :t, :t], float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class TinyGpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(CONTEXT, DIM)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos(torch.arange(t, device=input_ids.device).unsqueeze(0))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def doc_files():
    files = []
    for root, dirs, names in os.walk("/usr/share/doc"):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(root, n)
            if (n.startswith("README") or n.endswith(".txt")) and not n.endswith(".gz") and os.path.isfile(p) \
                    and not os.path.islink(p):
                files.append(p)
    return sorted(files)


def paragraphs(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        return []
    return [p.strip("\n") for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


def encode(text):
    return list(text.encode("utf-8"))


def corpus():
    files = doc_files()
    train, held = [], []
    for i, f in enumerate(files):
        (held if i % 10 == 0 else train).append(f)
    stream = [EOS]
    for f in train:
        for p in paragraphs(f):
            stream += encode(p) + [EOS]
    return torch.tensor(stream, dtype=torch.long), held


def train(model, data):
    g = torch.Generator().manual_seed(1234)
    eos_positions = (data[:-CONTEXT - 1] == EOS).nonzero().squeeze(1)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    start = time.time()
    model.train()
    for step in range(STEPS):
        lr = LR * min(1.0, (step + 1) / 100) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / STEPS)))
        for group in opt.param_groups:
            group["lr"] = lr
        # half the windows start at a paragraph's <|endoftext|> (as inference does), half anywhere
        half = BATCH // 2
        starts = torch.cat([eos_positions[torch.randint(len(eos_positions), (half,), generator=g)],
                            torch.randint(len(data) - CONTEXT - 1, (BATCH - half,), generator=g)])
        x = torch.stack([data[s:s + CONTEXT] for s in starts])
        y = torch.stack([data[s + 1:s + CONTEXT + 1] for s in starts])
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0 or step == STEPS - 1:
            print(f"step {step} loss {loss.item():.4f} ({loss.item() / math.log(2):.3f} bits/byte) "
                  f"{time.time() - start:.0f}s", flush=True)
        if time.time() - start > TIME_LIMIT:
            print(f"time limit reached at step {step}", flush=True)
            break
    model.eval()
    return step + 1, time.time() - start


# ---- the reference numbers the Java tests compare against (same windowing as DjlCausalLm) ----

@torch.no_grad()
def log_softmax_rows(model, prefix, body):
    """rows[j + 1] = log p(. | prefix, body[0..j]) for j = -1..len(body)-1, sliding the body as DjlCausalLm does."""
    p, n = len(prefix), len(body)
    window = CONTEXT - p
    stride = window // 2
    rows = []
    end = 0
    while True:
        new_end = min(n, window if end == 0 else end + stride)
        begin = max(0, new_end - window)
        seq = torch.tensor([prefix + body[begin:new_end]])
        logp = F.log_softmax(model(seq)[0].double(), dim=-1)
        first = -1 if end == 0 else end
        for j in range(first, new_end):
            rows.append(logp[p + j - begin])
        end = new_end
        if end >= n:
            return rows


def token_log_probs(model, text):
    body = encode(text)
    rows = log_softmax_rows(model, [EOS], body)
    return [rows[j][body[j]].item() for j in range(len(body))]


def eos_probabilities(model, prompt, text, positions):
    body = encode(text)
    rows = log_softmax_rows(model, [EOS] + encode(prompt), body)
    out = []
    for pos in positions:
        nbytes = len(text[:pos].encode("utf-8"))
        out.append(math.exp(rows[nbytes][EOS].item()))  # row index nbytes = after body[nbytes - 1]
    return out


def continuation_log_probs(model, prompt, candidates):
    out = []
    for c in candidates:
        body = encode(c)
        rows = log_softmax_rows(model, [EOS] + encode(prompt), body)
        out.append(sum(rows[j][body[j]].item() for j in range(len(body))))
    return out


def byte_symbols():
    """GPT-2's byte-to-unicode table: printable bytes map to themselves, the rest to code points from 256 up."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def tokenizer_json():
    symbols = byte_symbols()
    vocab = {symbols[b]: b for b in range(256)}
    vocab[EOS_TOKEN] = EOS
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": EOS, "content": EOS_TOKEN, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": []},
    }


def held_out_sample(held):
    """A few consecutive paragraphs of plain prose from the first held-out file that has them."""
    for f in held:
        ps = [p for p in paragraphs(f) if len(p) > 120 and p.count(". ") >= 1 and "  " not in p and p.isascii()]
        if len(ps) >= 3:
            return os.path.relpath(f, "/usr/share/doc"), ps[:3]
    raise SystemExit("no held-out prose found")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1234)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    data, held = corpus()
    print(f"training bytes: {len(data)}, held-out files: {len(held)}", flush=True)
    model = TinyGpt()
    print(f"parameters: {sum(p.numel() for p in model.parameters())}", flush=True)
    steps, seconds = train(model, data)

    example = torch.tensor([[EOS] + encode("Hello, world.")])
    torch.onnx.export(model, example, os.path.join(out, "model.onnx"), input_names=["input_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}},
                      opset_version=14)
    torch.jit.trace(model, example).save(os.path.join(out, "model.pt"))

    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(), f, ensure_ascii=False)
    with open(os.path.join(out, "model.json"), "w", encoding="utf-8") as f:
        json.dump({"description": "strata-tiny-gpt: a tiny byte-level causal LM TEST FIXTURE (tools/causal-lm-fixture), not a real LLM",
                   "task": "causal_lm", "engine": "onnx", "model_file": "model.onnx", "tokenizer_file": "tokenizer.json",
                   "max_tokens": CONTEXT, "eos_token": EOS_TOKEN, "bos_token": EOS_TOKEN}, f, indent=2)
        f.write("\n")

    texts = ["Install the package with apt-get.", "café — naïve résumé: ünïcödé ✓ text.",
             "This package provides a library for reading and writing files.\n\nSee the manual for details."]
    long_text = " ".join(f"Sentence number {i} of a long text describes the configuration file format." for i in range(12))
    prompt = "Read the text and mark where a paragraph ends.\n"
    eos_text = texts[2]
    eos_positions = [8, 20, eos_text.index("\n\n"), len(eos_text)]
    source, held_paragraphs = held_out_sample(held)
    reference = {
        "steps": steps, "train_seconds": round(seconds, 1),
        "log_probs": [{"text": t, "log_probs": token_log_probs(model, t)} for t in texts + [long_text]],
        "eos": {"prompt": prompt, "text": eos_text, "positions": eos_positions,
                "probabilities": eos_probabilities(model, prompt, eos_text, eos_positions)},
        "continuations": {"prompt": "Is this the end of a paragraph? Answer 1 or 2: ", "candidates": ["1", "2", "yes", "é"],
                          "log_probs": continuation_log_probs(model, "Is this the end of a paragraph? Answer 1 or 2: ",
                                                              ["1", "2", "yes", "é"])},
        "held_out": {"source": source, "paragraphs": held_paragraphs},
    }
    with open(os.path.join(out, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(reference, f, ensure_ascii=False, indent=1)
    print(f"trained {steps} steps in {seconds:.0f}s; wrote {out}", flush=True)


if __name__ == "__main__":
    main()
