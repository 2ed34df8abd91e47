#!/usr/bin/env python3
"""Exports a Hugging Face causal LM (e.g. Qwen/Qwen2-1.5B, the Meta-Chunking paper's choice) as a Strata model folder.

Run it where the model and `transformers` are available (not on a machine without model hubs):

    pip install torch transformers onnx
    python3 export.py Qwen/Qwen2-1.5B out/qwen2-1.5b --engine pytorch --device cuda   # TorchScript for a GPU ML node
    python3 export.py Qwen/Qwen2-1.5B out/qwen2-1.5b-onnx --engine onnx                # ONNX Runtime (CPU, bundled)

then copy the folder to every node's config/strata/models/ and name it in a strategy: {"llm": "qwen2-1.5b"}.

The exported graph maps input_ids [batch, T] (int64) to logits [batch, T, vocab]: Strata feeds unpadded single
sequences, so no attention mask or KV cache is needed (Strata slides its own windows over long texts).
Strata reads the folder's tokenizer.json with the Hugging Face tokenizers library, exactly as the model was trained.
"""
import argparse
import json
import os

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


class Logits(torch.nn.Module):
    """The model as Strata calls it: token ids in, next-token logits for every position out."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False, return_dict=True).logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--engine", choices=["pytorch", "onnx"], default="pytorch")
    ap.add_argument("--device", default="cpu", help="cuda for a GPU TorchScript trace (fp16)")
    ap.add_argument("--context", type=int, default=4096, help="max_tokens Strata uses as the window")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.backend_tokenizer.save(os.path.join(args.out, "tokenizer.json"))
    dtype = torch.float16 if args.device.startswith("cuda") else torch.float32
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).to(args.device).eval()
    wrapped = Logits(model)
    example = torch.tensor([tokenizer.encode("Strata exports a causal language model.")], device=args.device)

    with torch.no_grad():
        if args.engine == "pytorch":
            model_file = "model.pt"
            torch.jit.trace(wrapped, example, check_trace=False).save(os.path.join(args.out, model_file))
        else:
            model_file = "model.onnx"  # weights above 2 GB go to model.onnx.data beside it, which ONNX Runtime finds
            torch.onnx.export(wrapped, (example,), os.path.join(args.out, model_file), input_names=["input_ids"],
                              output_names=["logits"], opset_version=17,
                              dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "logits": {0: "batch", 1: "tokens"}})

    eos = tokenizer.eos_token or "<|endoftext|>"
    descriptor = {
        "description": f"{args.model} exported by tools/export-causal-lm/export.py ({args.engine}, {dtype})",
        "task": "causal_lm",
        "engine": args.engine,
        "model_file": model_file,
        "tokenizer_file": "tokenizer.json",
        "max_tokens": min(args.context, getattr(model.config, "max_position_embeddings", args.context)),
        "eos_token": eos,
    }
    if tokenizer.bos_token:
        descriptor["bos_token"] = tokenizer.bos_token
    with open(os.path.join(args.out, "model.json"), "w") as f:
        json.dump(descriptor, f, indent=2)
    print("wrote", args.out, descriptor)


if __name__ == "__main__":
    main()
