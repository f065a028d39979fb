#!/usr/bin/env python3
"""The live PyTorch check (run by ctest when python3 is found):

  tools/live_validate.py path/to/convlab [--seed S] [--batches 1,8] [--precisions fp32,int8,onnx]

For each network: a fresh PyTorch module with random He-normal weights and random BatchNorm
statistics (a new seed each run unless --seed or CONVLAB_LIVE_SEED is given; it is printed so a
failure can be reproduced), its state_dict saved with torch.save, exported through
export_torch.py --state-dict, then `convlab validate --kernel all` at each batch size, comparing
every layer. int8: the same module quantised by PyTorch (export_torch.py --quantize int8), then
`convlab validate --precision int8` with each int8 kernel of ours (oneDNN's int8 baseline too where
the CPU has VNNI: without it oneDNN's int16 pair sums saturate, which is oneDNN's documented
behaviour, not convlab's to check), and the negative control: the same file with one int8 weight
flipped must fail at that layer. onnx: the FP32 module exported to ONNX (export_torch.py --onnx) at
the last batch size, then `convlab validate --model model.onnx --kernel all`, every layer compared.
resnet18 and mobilenet-v2 (torchvision's, 3x224x224): FP32 and ONNX at batch 1 only, to keep CI short.
Prints the largest errors per kernel and network. Exit 0 when all
pass, 1 when any fails, 77 (ctest's SKIP_RETURN_CODE) when this python cannot import torch.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The negative control's layer per network (one in the middle) and the tap that holds its input.
FLIP = {"lab-cnn": ("conv2", "pool1"), "lenet5": ("conv2", "pool1"), "resnet8": ("layer2.0.conv1", "layer1.0"),
        "mobilenet-tiny": ("features.3.pw", "features.3.dw")}


def safetensors_entries(raw):
    """The header of a safetensors file's bytes: name -> (dtype, shape, begin, end) in `raw`."""
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + size])
    return {k: (v["dtype"], v["shape"], *(8 + size + o for o in v["data_offsets"]))
            for k, v in header.items() if k != "__metadata__"}


def flip_weight(src, dst, expect, layer, input_tap):
    """Copies the int8 file `src` to `dst` with one weight of `layer` negated: the negative one that
    meets the most input where its output is alive (-w x the mean of its input channel x the share of
    its output channel above zero, both from the reference), so that the flip raises the layer's
    output wherever that channel is alive. A dead channel (all zeros after a ReLU, as random
    BatchNorm statistics can make one) would hide any flip."""
    raw = bytearray(open(src, "rb").read())
    _, shape, begin, end = safetensors_entries(raw)[f"{layer}.weight"]
    ref = open(expect, "rb").read()
    entries = safetensors_entries(ref)

    def per_channel(tap, of):  # of(value) summed per channel, divided by the channel's size
        _, x_shape, x_begin, x_end = entries[tap]
        x = struct.unpack(f"<{(x_end - x_begin) // 4}f", ref[x_begin:x_end])
        channels, plane = x_shape[1], x_shape[2] * x_shape[3] if len(x_shape) == 4 else 1
        total = [0.0] * channels
        for i, v in enumerate(x):
            total[i // plane % channels] += of(v)
        return [t * channels / len(x) for t in total]

    mean = per_channel(input_tap, abs)
    alive = per_channel(layer, lambda v: v > 0)
    taps = shape[2] * shape[3] if len(shape) == 4 else 1
    per_k = len(raw[begin:end]) // shape[0]
    weights = [b - 256 if b > 127 else b for b in raw[begin:end]]
    i = max(range(len(weights)), key=lambda j: -weights[j] * mean[j // taps % shape[1]] * alive[j // per_k])
    raw[begin + i] = (-max(weights[i], -127)) & 0xFF
    open(dst, "wb").write(raw)
    return i


def validate(convlab, name, out, extra, report):
    return subprocess.run([convlab, "validate", "--model", name, "--input", os.path.join(out, "input.safetensors"),
                           "--expect", os.path.join(out, "expect.safetensors"), "--json", report] + extra,
                          capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("convlab")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("CONVLAB_LIVE_SEED", time.time_ns() % 1000003)))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--precisions", default="fp32,int8,onnx", help="fp32, int8, and onnx (the FP32 twin through ONNX)")
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"SKIPPED: the live PyTorch check needs torch, which {sys.executable} cannot import ({e}); "
              "install python3-torch to run it", flush=True)
        return 77
    sys.path.insert(0, HERE)
    from torch_models import LAB_MODELS, MODELS, init_reference_weights

    precisions = a.precisions.split(",")
    from torch_quantize import cpu_has_vnni
    int8_ids = "all" if cpu_has_vnni() else "ours"
    print(f"live PyTorch check: torch {torch.__version__}, seed {a.seed} (rerun with --seed {a.seed}), "
          f"batches {a.batches}, precisions {a.precisions}", flush=True)
    if "int8" in precisions and int8_ids == "ours":
        print("int8: our kernels only; this CPU has no VNNI, where oneDNN's int8 sums saturate in int16", flush=True)
    failed, rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(MODELS):
            seed = a.seed + i
            state_dict = os.path.join(tmp, f"{name}.pt")
            torch.save(init_reference_weights(MODELS[name](), seed).state_dict(), state_dict)
            # The ImageNet-size networks: one batch-1 check each, FP32 and ONNX (CI time)
            batches = a.batches.split(",") if name in LAB_MODELS else ["1"]
            for precision in precisions if name in LAB_MODELS else [p for p in precisions if p != "int8"]:
                if precision == "onnx":  # the FP32 twin exported to ONNX, validated layer by layer, once
                    out = os.path.join(tmp, f"{name}-onnx")
                    subprocess.run([sys.executable, os.path.join(HERE, "export_torch.py"), "--model", name,
                                    "--state-dict", state_dict, "--input-seed", str(seed), "--batch", batches[-1],
                                    "--out", out, "--onnx"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    report = os.path.join(out, "validate.json")
                    run = subprocess.run([a.convlab, "validate", "--model", os.path.join(out, "model.onnx"), "--kernel", "all",
                                          "--input", os.path.join(out, "input.safetensors"),
                                          "--expect", os.path.join(out, "expect.safetensors"), "--json", report],
                                         capture_output=True, text=True)
                    if run.returncode != 0:
                        failed.append(f"{name} onnx")
                        print(run.stdout + run.stderr, flush=True)
                        if not os.path.exists(report) or os.path.getsize(report) == 0:
                            continue
                    for k in json.load(open(report))["kernels"]:
                        rows.append((name, "onnx", batches[-1], k["kernel"],
                                     f"{max(l['normalised_error'] for l in k['layers']):.3e}",
                                     f"{k['top1_agree']}/{k['items']}", "pass" if k["pass"] else "FAIL"))
                    continue
                for batch in batches:
                    what = f"{name} {precision} batch {batch}"
                    out = os.path.join(tmp, f"{name}-{precision}-{batch}")
                    quantize = ["--quantize", "int8"] if precision == "int8" else []
                    subprocess.run([sys.executable, os.path.join(HERE, "export_torch.py"), "--model", name,
                                    "--state-dict", state_dict, "--input-seed", str(seed), "--batch", batch,
                                    "--out", out] + quantize, check=True, stdout=subprocess.DEVNULL)
                    report = os.path.join(out, "validate.json")
                    weights = os.path.join(out, "quantized.safetensors" if quantize else "weights.safetensors")
                    extra = ["--weights", weights, "--kernel", int8_ids if quantize else "all"]
                    run = validate(a.convlab, name, out, extra + (["--precision", "int8"] if quantize else []), report)
                    if run.returncode != 0:
                        failed.append(what)
                        print(run.stdout + run.stderr, flush=True)
                        if not os.path.exists(report) or os.path.getsize(report) == 0:
                            continue
                    for k in json.load(open(report))["kernels"]:
                        layers = [l for l in k["layers"] if l.get("judged", True)]
                        error = (f"{max(l['max_quanta'] for l in layers):.0f} quanta, "
                                 f"{100 * max(l['off_share'] for l in layers):.2f}% off" if quantize else
                                 f"{max(l['normalised_error'] for l in layers):.3e}")
                        rows.append((name, precision, batch, k["kernel"], error,
                                     f"{k['top1_agree']}/{k['items']}", "pass" if k["pass"] else "FAIL"))
                    if quantize and batch == batches[-1]:  # the negative control, once per network
                        flipped, (layer, input_tap) = os.path.join(out, "flipped.safetensors"), FLIP[name]
                        flip_weight(weights, flipped, os.path.join(out, "expect.safetensors"), layer, input_tap)
                        extra = ["--weights", flipped, "--precision", "int8", "--kernel", "cpu.20_int8_reference"]
                        run = validate(a.convlab, name, out, extra, report)
                        first = json.load(open(report))["kernels"][0]["first_divergent_layer"] if run.returncode == 1 else None
                        caught = first == layer
                        rows.append((name, precision, batch, f"flipped {layer} weight", f"failed at {first}", "",
                                     "pass (caught)" if caught else "FAIL (not caught)"))
                        if not caught:
                            failed.append(f"{what}: a flipped weight of {layer}")
                            print(run.stdout + run.stderr, flush=True)
    print(f"{'model':<16}{'precision':>10}{'batch':>6}  {'kernel':<32}{'largest judged error':>28}{'top-1':>7}  result")
    for r in rows:
        print(f"{r[0]:<16}{r[1]:>10}{r[2]:>6}  {r[3]:<32}{r[4]:>28}{r[5]:>7}  {r[6]}")
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    print(f"all {len(rows)} kernel x network x precision x batch validations pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
