#!/usr/bin/env python3
# An own training job for migscope: ResNet-18 on synthetic CIFAR-10-shaped images, reporting each step.
"""Image classification as a user would write it, reporting every step to migscope.

The data are random 3x32x32 images of 10 classes made on the device, so nothing is downloaded.
Each finished step is reported with migscope_progress.step(batch, "images") (its first call is
a warm-up that only starts the clock).
"""
import argparse
import os
import sys
import time

import torch
from torch import nn


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


def small_cnn(classes):
    """A few conv layers in plain torch, for machines without torchvision."""
    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True)]
    return nn.Sequential(*block(3, 32, 1), *block(32, 64, 2), *block(64, 128, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, classes))


def build_model(name, classes):
    if name == "small-cnn":
        return small_cnn(classes)
    try:
        import torchvision
    except ImportError:
        sys.exit("train.py: --model resnet18 needs torchvision; install it or use --model small-cnn")
    return torchvision.models.resnet18(num_classes=classes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps, warm-up included")
    parser.add_argument("--batch", type=int, default=256, help="images per step")
    parser.add_argument("--model", choices=["resnet18", "small-cnn"], default="resnet18")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--warmup", type=int, default=5,
                        help="first steps left out of the final images/s (reported all the same)")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be at least 1 and --warmup at least 0")
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          "cpu" if args.device == "auto" else args.device)
    cuda = device.type == "cuda"
    memory_format = torch.channels_last if cuda else torch.contiguous_format
    report = progress_reporter()

    classes, pool = 10, 4  # a few batches of synthetic data, used in turn
    images = [torch.randn(args.batch, 3, 32, 32, device=device).to(memory_format=memory_format)
              for _ in range(pool)]
    labels = [torch.randint(0, classes, (args.batch,), device=device) for _ in range(pool)]
    model = build_model(args.model, classes).to(device, memory_format=memory_format)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def sync():
        if cuda:
            torch.cuda.synchronize()

    warmup = min(args.warmup, args.steps - 1)
    start = warm = time.perf_counter()
    for step in range(args.steps):
        x, y = images[step % pool], labels[step % pool]
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            loss = loss_fn(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        report(args.batch, "images")
        if (step + 1) % 50 == 0:
            print(f"step {step + 1}: loss {loss.item():.3f}", file=sys.stderr)
        if step + 1 == warmup:
            sync()
            warm = time.perf_counter()
    sync()
    end = time.perf_counter()
    rate = (args.steps - warmup) * args.batch / (end - warm)
    print(f"train.py: {args.model} on {device.type}, {args.steps} steps of {args.batch} images in "
          f"{end - start:.1f} s, {rate:.0f} images/s after {warmup} warm-up steps", file=sys.stderr)


if __name__ == "__main__":
    main()
