#!/usr/bin/env python3
"""PyTorch (cuDNN) on the GPU, timed like convlab times itself, for bench/gpu-check.sh:
  networks: each model's forward on the weights of a convlab reference (weights.safetensors from
            tools/export_torch.py), eager, in FP32 (TF32 off) and in TF32, batch 1 and 32;
  layers:   single convolutions (benchdnn descriptors) through torch.nn.functional.conv2d, FP32
            and TF32.
Per case: 10 warmup runs, then 100 trials, each synchronize / clock / run / synchronize / clock
(host time) with a CUDA event pair around the run (device time); medians reported. JSON to --out.

  tools/torch_gpu_bench.py --weights-dir DIR --models lab-cnn,resnet8 --batches 1,32 \\
      --layers mb32ic16ih32oc16oh32kh3ph1 --out torch.json
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import MODELS  # noqa: E402


def timed(fn, warmup=10, trials=100):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    host, device = [], []
    for _ in range(trials):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        host.append((time.perf_counter_ns() - t0) * 1e-6)
        device.append(start.elapsed_time(stop))
    return {"p50_ms": statistics.median(host), "device_p50_ms": statistics.median(device), "trials": trials}


def load_weights(path):
    try:
        from safetensors.torch import load_file
        return load_file(path)
    except ImportError:
        sys.exit("torch_gpu_bench: needs the safetensors package")


def parse_descriptor(d):
    """The benchdnn fields this script needs: mb g ic ih iw oc kh kw sh sw ph pw (dilation unsupported)."""
    fields = dict((k, int(v)) for k, v in re.findall(r"(mb|ic|ih|iw|oc|oh|ow|kh|kw|sh|sw|ph|pw|g)(\d+)", d))
    f = {"mb": 2, "g": 1, "sh": 1, "ph": 0, **fields}
    f.setdefault("iw", f["ih"])
    f.setdefault("kw", f["kh"])
    f.setdefault("sw", f["sh"])
    f.setdefault("pw", f["ph"])
    return f


def set_tf32(on):
    torch.backends.cudnn.allow_tf32 = on
    torch.backends.cuda.matmul.allow_tf32 = on


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights-dir", help="DIR/<model>/weights.safetensors for each model")
    ap.add_argument("--models", default="")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--layers", default="", help="benchdnn descriptors, comma-separated")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    torch.backends.cudnn.benchmark = True  # cuDNN's own autotuning: the strongest baseline
    dev = torch.device("cuda")
    doc = {"torch_version": torch.__version__, "cudnn_version": torch.backends.cudnn.version(),
           "device": torch.cuda.get_device_name(0), "networks": [], "layers": []}
    for model_name in filter(None, a.models.split(",")):
        model = MODELS[model_name]()
        model.load_state_dict(load_weights(os.path.join(a.weights_dir, model_name, "weights.safetensors")))
        model = model.float().eval().to(dev)
        for batch in map(int, a.batches.split(",")):
            x = torch.randn((batch, *model.input_shape), device=dev)
            for precision in ("fp32", "tf32"):
                set_tf32(precision == "tf32")
                row = {"model": model_name, "batch": batch, "precision": precision, "mode": "eager",
                       **timed(lambda: model(x))}
                doc["networks"].append(row)
                print(json.dumps(row), flush=True)
    for d in filter(None, a.layers.split(",")):
        f = parse_descriptor(d)
        x = torch.randn((f["mb"], f["ic"], f["ih"], f["iw"]), device=dev)
        w = torch.randn((f["oc"], f["ic"] // f["g"], f["kh"], f["kw"]), device=dev)
        b = torch.randn((f["oc"],), device=dev)
        for precision in ("fp32", "tf32"):
            set_tf32(precision == "tf32")
            run = lambda: F.conv2d(x, w, b, stride=(f["sh"], f["sw"]), padding=(f["ph"], f["pw"]), groups=f["g"])  # noqa: E731
            oh, ow = run().shape[2:]
            flops = 2.0 * f["mb"] * f["oc"] * oh * ow * (f["ic"] // f["g"]) * f["kh"] * f["kw"]
            t = timed(run)
            row = {"problem": d, "precision": precision, **t, "gflops": flops / (t["device_p50_ms"] * 1e6)}
            doc["layers"].append(row)
            print(json.dumps(row), flush=True)
    with open(a.out, "w") as out:
        json.dump(doc, out, indent=1)


if __name__ == "__main__":
    main()
