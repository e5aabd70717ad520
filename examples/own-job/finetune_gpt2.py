#!/usr/bin/env python3
# An own training job for migscope: GPT-2 small fine-tuned on random tokens, reporting tokens per step.
"""Language-model fine-tuning as a user would write it, reporting every step to migscope.

A Hugging Face transformers GPT2LMHeadModel with GPT-2 small's sizes and random weights (nothing
is downloaded) learns random token sequences; each finished step is reported with
migscope_progress.step(batch * seq, "tokens").
"""
import argparse
import os
import sys
import time

import torch

try:
    from transformers import GPT2Config, GPT2LMHeadModel
except ImportError:
    sys.stderr.write("finetune_gpt2.py: needs Hugging Face transformers (pip install transformers)\n")
    sys.exit(2)


def progress_reporter():
    """migscope_progress.step if migscope_progress is installed or in this checkout, else a no-op."""
    try:
        import migscope_progress
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.append(os.path.join(here, "..", "..", "python"))
        try:
            import migscope_progress
        except ImportError:
            return lambda items, item_unit=None: None
    return migscope_progress.step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="training steps, warm-up included")
    parser.add_argument("--batch", type=int, default=8, help="sequences per step")
    parser.add_argument("--seq", type=int, default=512, help="tokens per sequence (at most 1024)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--warmup", type=int, default=3,
                        help="first steps left out of the final tokens/s (reported all the same)")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be at least 1 and --warmup at least 0")
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          "cpu" if args.device == "auto" else args.device)
    cuda = device.type == "cuda"
    report = progress_reporter()

    config = GPT2Config()  # GPT-2 small: 12 layers, 12 heads, 768 wide, 50257 tokens
    model = GPT2LMHeadModel(config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    pool = 4  # a few batches of random tokens, used in turn
    tokens = torch.randint(0, config.vocab_size, (pool, args.batch, args.seq), device=device)
    tokens_per_step = args.batch * args.seq

    def sync():
        if cuda:
            torch.cuda.synchronize()

    warmup = min(args.warmup, args.steps - 1)
    start = warm = time.perf_counter()
    for step in range(args.steps):
        batch = tokens[step % pool]
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            loss = model(input_ids=batch, labels=batch).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        report(tokens_per_step, "tokens")
        if (step + 1) % 20 == 0:
            print(f"step {step + 1}: loss {loss.item():.3f}", file=sys.stderr)
        if step + 1 == warmup:
            sync()
            warm = time.perf_counter()
    sync()
    end = time.perf_counter()
    rate = (args.steps - warmup) * tokens_per_step / (end - warm)
    print(f"finetune_gpt2.py: GPT-2 small on {device.type}, {args.steps} steps of {tokens_per_step} "
          f"tokens in {end - start:.1f} s, {rate:.0f} tokens/s after {warmup} warm-up steps",
          file=sys.stderr)


if __name__ == "__main__":
    main()
