#!/usr/bin/env python3
"""Whole networks on the CPU: convlab's best FP32 forward against PyTorch eager FP32, same weights,
same threads, in one run. Rounds alternate the order (convlab first, then PyTorch first, ...), so
a busy spell of a shared machine falls on both; each figure is the median over rounds of each
round's median.

  tools/torch_cpu_bench.py --convlab build/convlab --threads 2 --rounds 3 [--models all] \\
      [--batches 1,32] [--kernels cpu.auto] [--json out.json]

PyTorch runs the twin modules of tools/torch_models.py in eval mode under torch.no_grad() (BatchNorm
as its own op, as a PyTorch user runs them), 10 warmup runs then --trials timed ones. convlab runs
`convlab run --weights W` with the same state_dict, each kernel of --kernels; "ours" is the fastest
of them. Prints per network and batch both medians and PyTorch / ours, then the geometric mean over
the networks per batch.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import torch
except ImportError:  # the python3 first on PATH may not be Debian's, the one with python3-torch
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("torch_cpu_bench.py: no torch here (Debian: apt-get install python3-torch)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_torch import write_safetensors  # noqa: E402
from torch_models import MODELS, init_reference_weights  # noqa: E402


def torch_median_ms(model, batch, trials):
    x = torch.randn((batch, *model.input_shape), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        for _ in range(10):
            model(x)
        times = []
        for _ in range(trials):
            t0 = time.perf_counter_ns()
            model(x)
            times.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(times)


def convlab_medians_ms(a, model, weights, batch, out):
    cmd = [a.convlab, "run", "--model", model, "--weights", weights, "--batch", str(batch), "--kernel", a.kernels,
           "--threads", str(a.threads), "--trials", str(a.trials), "--json", out]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"torch_cpu_bench.py: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    with open(out) as f:
        rows = json.load(f)["results"]
    return {r["kernel"]: r["latency_ms"]["p50"] for r in rows if r["status"] == "ok"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--convlab", default="build/convlab")
    ap.add_argument("--models", default="all", help="comma-separated, or all (the four reference networks)")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--kernels", default="cpu.auto", help="convlab's candidates for \"ours\" (each must run every layer)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--json", help="write the medians and ratios here")
    a = ap.parse_args()
    models = sorted(MODELS) if a.models == "all" else a.models.split(",")
    for m in models:
        if m not in MODELS:
            ap.error(f"--models: unknown model '{m}' (choices: {', '.join(sorted(MODELS))}, all)")
    batches = [int(b) for b in a.batches.split(",")]
    if a.rounds < 1 or a.trials < 1 or a.threads < 1 or min(batches) < 1:
        ap.error("--rounds, --trials, --threads and --batches must be positive")
    torch.set_num_threads(a.threads)
    torch.set_grad_enabled(False)

    work = tempfile.mkdtemp(prefix="torch_cpu_bench_")
    nets, samples = {}, {}  # samples[(model, batch)] = {"torch": [...], kernel: [...]}
    for m in models:
        net = init_reference_weights(MODELS[m](), seed=1).float().eval()
        weights = os.path.join(work, f"{m}.safetensors")
        write_safetensors(weights, net.state_dict(), {"producer": "convlab tools/torch_cpu_bench.py"})
        nets[m] = (net, weights)
    for r in range(a.rounds):
        for m in models:
            net, weights = nets[m]
            for b in batches:
                s = samples.setdefault((m, b), {})
                steps = [lambda: s.setdefault("torch", []).append(torch_median_ms(net, b, a.trials)),
                         lambda: [s.setdefault(k, []).append(v) for k, v in
                                  convlab_medians_ms(a, m, weights, b, os.path.join(work, "run.json")).items()]]
                for step in steps if r % 2 == 0 else reversed(steps):
                    step()
    rows, logs = [], {}
    print(f"{'model':<16} {'batch':>5} {'PyTorch ms':>11} {'ours ms':>9} {'kernel':<22} {'PyTorch/ours':>12}")
    for (m, b), s in samples.items():
        torch_ms = statistics.median(s["torch"])
        ours = {k: statistics.median(v) for k, v in s.items() if k != "torch"}
        best = min(ours, key=ours.get)
        ratio = torch_ms / ours[best]
        logs.setdefault(b, []).append(math.log(ratio))
        rows.append({"model": m, "batch": b, "torch_ms": torch_ms, "ours_ms": ours[best], "kernel": best,
                     "ratio": ratio, "ours_by_kernel": ours})
        print(f"{m:<16} {b:>5} {torch_ms:>11.4f} {ours[best]:>9.4f} {best:<22} {ratio:>11.1f}x")
    summary = {b: math.exp(sum(v) / len(v)) for b, v in logs.items()}
    for b, g in summary.items():
        print(f"batch {b}: PyTorch eager / convlab's best, geometric mean over {len(logs[b])} networks: {g:.1f}x")
    print(f"torch {torch.__version__}, {a.threads} threads, {a.rounds} rounds of {a.trials} trials")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch_version": torch.__version__, "threads": a.threads, "rounds": a.rounds,
                       "rows": rows, "geometric_mean": summary}, f, indent=1)


if __name__ == "__main__":
    main()
