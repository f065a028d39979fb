#!/usr/bin/env python3
"""Writes a PyTorch reference for `convlab validate`:
  weights.safetensors  the model's state_dict (num_batches_tracked included, as PyTorch saves it)
  input.safetensors    `input`, N x C x H x W float32
  expect.safetensors   `output` (the logits, N x 10) and every convlab layer's output by name
made in eval mode, float32, on the CPU (or with --device cuda on the GPU, TF32 switched off so
that the reference is FP32); the torch version and device are in each file's __metadata__.

  tools/export_torch.py --model resnet8 --seed 3 --batch 8 --out DIR
  tools/export_torch.py --model resnet8 --state-dict trained.pt --batch 8 --out DIR

With --quantize int8 the model is quantised by PyTorch's eager-mode post-training static recipe
(tools/torch_quantize.py: fused, the `onednn` qconfig, --calibration seeded inputs apart from the
reference input, converted) and DIR gets quantized.safetensors (convlab's int8 interchange file,
for `convlab validate --precision int8 --weights` and `convlab run --quantized`) beside
weights.safetensors (the FP32 state_dict it was made from); expect.safetensors then holds the
quantised model's outputs, dequantised to F32. --engine picks the quantised engine that runs it
(default: onednn on a CPU with VNNI, else qnnpack, which accumulates exactly without it).

With --onnx the model is also exported as DIR/model.onnx (torch.onnx.export, eval mode, --opset,
the batch left free), each layer's output a further graph output named as in expect.safetensors:
`convlab validate --model DIR/model.onnx --input ... --expect ...` then compares layer by layer.

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
import torch_quantize  # noqa: E402
from torch_models import LAB_MODELS, MODELS, init_reference_weights  # noqa: E402

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.float64: "F64", torch.int64: "I64", torch.int32: "I32",
          torch.int8: "I8"}


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


class _WithTaps(torch.nn.Module):
    """The twin with each layer's output (the taps) as a further output, so that the ONNX graph
    names them: convlab's importer names a layer after the graph output it produces."""

    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, x):
        taps = {}
        logits = self.model(x, taps)
        return (logits, *(taps[n] for n in self.names))


def export_onnx(model, x, tap_names, path, opset):
    """torch.onnx.export in eval mode: the input `input` and output `output` (the logits), the
    batch free (dynamic), then one output per tap name."""
    names = ["input", "output", *tap_names]
    torch.onnx.export(_WithTaps(model, tap_names), x, path, opset_version=opset, input_names=names[:1],
                      output_names=names[1:], dynamic_axes={n: {0: "batch"} for n in names},
                      training=torch.onnx.TrainingMode.EVAL, do_constant_folding=True)


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
    ap.add_argument("--quantize", choices=["int8"], help="quantise with PyTorch and export the int8 reference")
    ap.add_argument("--calibration", type=int, default=32, help="--quantize: seeded calibration inputs (default 32)")
    ap.add_argument("--engine", choices=["onednn", "qnnpack"], help="--quantize: the quantised engine that runs it")
    ap.add_argument("--onnx", action="store_true", help="also export the model as DIR/model.onnx (each layer's output a "
                                                         "named graph output, for `convlab validate --model DIR/model.onnx`)")
    ap.add_argument("--opset", type=int, default=13, help="--onnx: the ONNX opset (convlab reads 11 to 17)")
    a = ap.parse_args()
    if a.batch < 1:
        ap.error(f"--batch {a.batch} must be at least 1")
    if a.calibration < 1:
        ap.error(f"--calibration {a.calibration} must be at least 1")
    if a.quantize and a.device != "cpu":
        ap.error("--quantize runs on the CPU (PyTorch's quantised engines); leave out --device")
    if a.onnx and a.quantize:
        ap.error("--onnx exports the FP32 model; leave out --quantize")
    if a.quantize and a.model not in LAB_MODELS:
        ap.error(f"--quantize: PyTorch's int8 recipe here covers {', '.join(LAB_MODELS)}; {a.model} is FP32 only")

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
    fp32_state = {k: v.cpu() for k, v in model.state_dict().items()}
    meta = {"torch_version": torch.__version__, "model": a.model, "batch": str(a.batch),
            "weights": a.state_dict if a.state_dict else f"init_reference_weights(seed={a.seed})",
            "device": a.device, "producer": "convlab tools/export_torch.py"}
    os.makedirs(a.out, exist_ok=True)
    if a.quantize:
        # The calibration inputs: their own stream, apart from the reference input's.
        calibration = torch.randn((a.calibration, *model.input_shape), generator=g, dtype=torch.float32)
        engine = a.engine or torch_quantize.engine_for_this_cpu()
        model = torch_quantize.quantize(model, calibration, engine)
        meta.update(precision="int8", engine=torch_quantize.describe_engine(engine),
                    calibration=f"{a.calibration} seeded inputs, PyTorch's onednn qconfig (HistogramObserver)")
        write_safetensors(os.path.join(a.out, "quantized.safetensors"), torch_quantize.interchange_tensors(model), meta)
    taps = {}
    logits = model(x.to(a.device), taps).cpu()
    if hasattr(model, "torchvision_forward"):  # the written-out forward must be torchvision's
        theirs = model.torchvision_forward(x.to(a.device)).cpu()
        if not torch.equal(theirs, logits):
            sys.exit(f"{a.model}: the twin's forward differs from torchvision's by up to "
                     f"{(theirs - logits).abs().max().item():.3e}; fix tools/torchvision_twins.py")
    taps = {k: v.cpu() for k, v in taps.items()}
    if a.max_tap_elems > 0:
        taps = {k: v for k, v in taps.items() if v.numel() <= a.max_tap_elems}

    if a.onnx:
        export_onnx(model, x.to(a.device), list(taps), os.path.join(a.out, "model.onnx"), a.opset)
    write_safetensors(os.path.join(a.out, "weights.safetensors"), fp32_state, meta)
    write_safetensors(os.path.join(a.out, "input.safetensors"), {"input": x}, meta)
    write_safetensors(os.path.join(a.out, "expect.safetensors"), {"output": logits, **taps}, meta)
    what = f"int8 on {meta['engine']}: quantized, " if a.quantize else "model.onnx, " if a.onnx else ""
    print(f"{a.model} batch {a.batch}: wrote {what}weights, input and expect ({len(taps)} layers) to {a.out}")


if __name__ == "__main__":
    main()
