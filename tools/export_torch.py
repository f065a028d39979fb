#!/usr/bin/env python3
"""Writes a PyTorch reference for `convlab validate`:
  weights.safetensors  the model's state_dict (num_batches_tracked included, as PyTorch saves it)
  input.safetensors    `input`, N x C x H x W float32
  expect.safetensors   `output` (the logits, N x 10) and every convlab layer's output by name
made in eval mode, float32, on the CPU (or with --device cuda on the GPU, TF32 switched off so
that the reference is FP32); the torch version and device are in each file's __metadata__.

  tools/export_torch.py --model resnet8 --seed 3 --batch 8 --out DIR
  tools/export_torch.py --model resnet8 --state-dict trained.pt --batch 8 --out DIR

Without --state-dict the weights are init_reference_weights(seed) (see tools/torch_models.py).
Uses the `safetensors` package when installed, else writes the format itself (a JSON header and
the raw little-endian bytes).
"""
import argparse
import json
import os
import struct
import sys

try:
    import torch
except ImportError:
    # The python3 first on PATH may not be Debian's, which is the one with python3-torch: rerun
    # this script with that one, or say which Python lacks what.
    DEBIAN_PYTHON = "/usr/bin/python3"
    if os.path.exists(DEBIAN_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    sys.exit(f"export_torch.py: {sys.executable} has no torch: install it (Debian: apt-get install python3-torch) "
             f"or run this script with a Python that has it")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import MODELS, init_reference_weights  # noqa: E402

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.float64: "F64", torch.int64: "I64"}


def write_safetensors(path, tensors, metadata):
    try:
        from safetensors.torch import save_file
        save_file({k: v.contiguous() for k, v in tensors.items()}, path, metadata=metadata)
        return
    except ImportError:
        pass
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        array = t.detach().contiguous().cpu().numpy()
        raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()  # the format is little-endian
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--seed", type=int, default=0, help="seed of the reference weights and the input")
    src.add_argument("--state-dict", help="a torch.save()d state_dict of the same architecture")
    ap.add_argument("--input-seed", type=int, default=None, help="seed of the input (default: --seed)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda for a GPU reference (FP32: TF32 off)")
    ap.add_argument("--max-tap-elems", type=int, default=0,
                    help="leave out layer outputs with more elements than this (0: keep all); keeps golden files small")
    a = ap.parse_args()
    if a.batch < 1:
        ap.error(f"--batch {a.batch} must be at least 1")

    torch.set_grad_enabled(False)
    if a.device != "cpu":  # PyTorch lets cuDNN convolutions and matmuls use TF32 by default
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    model = MODELS[a.model]()
    if a.state_dict:
        model.load_state_dict(torch.load(a.state_dict, map_location="cpu"), strict=True)
    else:
        init_reference_weights(model, a.seed)
    model = model.float().eval().to(a.device)
    g = torch.Generator().manual_seed(a.seed if a.input_seed is None else a.input_seed)
    x = torch.randn((a.batch, *model.input_shape), generator=g, dtype=torch.float32)
    taps = {}
    logits = model(x.to(a.device), taps).cpu()
    taps = {k: v.cpu() for k, v in taps.items()}
    if a.max_tap_elems > 0:
        taps = {k: v for k, v in taps.items() if v.numel() <= a.max_tap_elems}

    meta = {"torch_version": torch.__version__, "model": a.model, "batch": str(a.batch),
            "weights": a.state_dict if a.state_dict else f"init_reference_weights(seed={a.seed})",
            "device": a.device, "producer": "convlab tools/export_torch.py"}
    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "weights.safetensors"), {k: v.cpu() for k, v in model.state_dict().items()}, meta)
    write_safetensors(os.path.join(a.out, "input.safetensors"), {"input": x}, meta)
    write_safetensors(os.path.join(a.out, "expect.safetensors"), {"output": logits, **taps}, meta)
    print(f"{a.model} batch {a.batch}: wrote weights, input and expect ({len(taps)} layers) to {a.out}")


if __name__ == "__main__":
    main()
