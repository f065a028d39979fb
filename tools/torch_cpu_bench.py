#!/usr/bin/env python3
"""Whole networks on the CPU: convlab's best forward against PyTorch's, same weights, same threads,
in one run; FP32 (PyTorch eager) or int8 (PyTorch's quantised model). Rounds alternate the order
(convlab first, then PyTorch first, ...), so a busy spell of a shared machine falls on both; each
figure is the median over rounds of each round's median.

  tools/torch_cpu_bench.py --convlab build/convlab --threads 2 --rounds 3 [--models all] \\
      [--batches 1,32] [--kernels cpu.auto] [--precision fp32|int8] [--json out.json]

PyTorch runs the twin modules of tools/torch_models.py in eval mode under torch.no_grad() (BatchNorm
as its own op, as a PyTorch user runs them), 10 warmup runs then --trials timed ones. convlab runs
`convlab run --weights W` with the same state_dict, each kernel of --kernels; "ours" is the fastest
of them. Prints per network and batch both medians and PyTorch / ours, then the geometric mean over
the networks per batch.

--precision int8: PyTorch quantises the twin with its eager post-training recipe
(tools/torch_quantize.py, --calibration seeded inputs) once per quantised engine of --engines
(onednn, qnnpack), and times each converted model (float in, QuantStub, int8 layers, DeQuantStub,
float out). convlab runs `convlab run --precision int8 --quantized F` on the same quantised weights
and parameters, F written from PyTorch's converted model, with the int8 kernels of --kernels
(default cpu.auto: cpu.auto_int8, the fastest int8 kernel of ours per layer), and times the same span: quantising the input, the int8
layers, dequantising the logits. The ratio is printed per engine.
"""
import argparse
import copy
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
    print("torch_cpu_bench.py: no torch here (Debian: apt-get install python3-torch)", file=sys.stderr)
    sys.exit(77)  # ctest's SKIP_RETURN_CODE

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_quantize  # noqa: E402
from export_torch import write_safetensors  # noqa: E402
from torch_models import IMAGENET_MODELS, LAB_MODELS, MODELS, init_reference_weights  # noqa: E402


def torch_median_ms(model, batch, trials, engine=None):
    if engine:  # a quantised model runs on the engine it was converted for
        torch.backends.quantized.engine = engine
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
    which = ["--precision", "int8", "--quantized", weights] if a.precision == "int8" else ["--weights", weights]
    cmd = [a.convlab, "run", "--model", model, "--batch", str(batch), "--kernel", a.kernels, "--threads", str(a.threads),
           "--trials", str(a.trials), "--json", out] + which
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"torch_cpu_bench.py: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    with open(out) as f:
        rows = json.load(f)["results"]
    return {r["kernel"]: r["latency_ms"]["p50"] for r in rows if r["status"] == "ok"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--convlab", default="build/convlab")
    ap.add_argument("--models", default="all", help="comma-separated, all (the four lab networks) or imagenet "
                                                     "(resnet18, mobilenet-v2; FP32)")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--kernels", help="convlab's candidates for \"ours\" (each must run every layer); default cpu.auto "
                                      "(int8: cpu.auto_int8)")
    ap.add_argument("--precision", choices=["fp32", "int8"], default="fp32")
    ap.add_argument("--engines", default="onednn,qnnpack", help="int8: PyTorch's quantised engines to time")
    ap.add_argument("--calibration", type=int, default=32, help="int8: PyTorch's calibration inputs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--json", help="write the medians and ratios here")
    a = ap.parse_args()
    a.kernels = a.kernels or "cpu.auto"
    engines = a.engines.split(",") if a.precision == "int8" else []
    for e in engines:
        if e not in torch.backends.quantized.supported_engines:
            ap.error(f"--engines: this PyTorch has no quantised engine '{e}' "
                     f"(it has {', '.join(torch.backends.quantized.supported_engines)})")
    groups = {"all": list(LAB_MODELS), "imagenet": list(IMAGENET_MODELS)}
    models = groups[a.models] if a.models in groups else a.models.split(",")
    for m in models:
        if m not in MODELS:
            ap.error(f"--models: unknown model '{m}' (choices: {', '.join(MODELS)}, all, imagenet)")
        if a.precision == "int8" and m not in LAB_MODELS:
            ap.error(f"--models: {m} is FP32 only here (PyTorch's int8 recipe covers {', '.join(LAB_MODELS)})")
    batches = [int(b) for b in a.batches.split(",")]
    if a.rounds < 1 or a.trials < 1 or a.threads < 1 or min(batches) < 1:
        ap.error("--rounds, --trials, --threads and --batches must be positive")
    torch.set_num_threads(a.threads)
    torch.set_grad_enabled(False)

    work = tempfile.mkdtemp(prefix="torch_cpu_bench_")
    nets, samples = {}, {}  # nets[model] = ({name: torch module}, convlab's file); samples[(model, batch)][name]
    for m in models:
        net = init_reference_weights(MODELS[m](), seed=1).float().eval()
        weights = os.path.join(work, f"{m}.safetensors")
        meta = {"producer": "convlab tools/torch_cpu_bench.py"}
        if a.precision == "fp32":
            write_safetensors(weights, net.state_dict(), meta)
            nets[m] = ({"torch": net}, weights)
            continue
        g = torch.Generator().manual_seed(7)
        calibration = torch.randn((a.calibration, *net.input_shape), generator=g)
        converted = {f"torch {e}": torch_quantize.quantize(copy.deepcopy(net), calibration, e) for e in engines}
        write_safetensors(weights, torch_quantize.interchange_tensors(next(iter(converted.values()))), meta)
        nets[m] = (converted, weights)
    for r in range(a.rounds):
        for m in models:
            theirs, weights = nets[m]
            for b in batches:
                s = samples.setdefault((m, b), {})
                steps = [lambda name=name, module=module: s.setdefault(name, []).append(
                             torch_median_ms(module, b, a.trials, name.split(" ")[1] if " " in name else None))
                         for name, module in theirs.items()]
                steps.append(lambda: [s.setdefault(k, []).append(v) for k, v in
                                      convlab_medians_ms(a, m, weights, b, os.path.join(work, "run.json")).items()])
                for step in steps if r % 2 == 0 else reversed(steps):
                    step()
    rows, logs = [], {}
    names = list(next(iter(nets.values()))[0])  # PyTorch's: "torch", or "torch <engine>" per engine
    print(f"{'model':<16} {'batch':>5} " + " ".join(f"{n + ' ms':>18}" for n in names) +
          f" {'ours ms':>9} {'kernel':<24} " + " ".join(f"{n + '/ours':>18}" for n in names))
    for (m, b), s in samples.items():
        theirs = {n: statistics.median(s[n]) for n in names}
        ours = {k: statistics.median(v) for k, v in s.items() if k not in names}
        best = min(ours, key=ours.get)
        ratios = {n: t / ours[best] for n, t in theirs.items()}
        for n, ratio in ratios.items():
            logs.setdefault((n, b), []).append(math.log(ratio))
        rows.append({"model": m, "batch": b, "torch_ms": theirs, "ours_ms": ours[best], "kernel": best,
                     "ratio": ratios, "ours_by_kernel": ours})
        print(f"{m:<16} {b:>5} " + " ".join(f"{t:>18.4f}" for t in theirs.values()) + f" {ours[best]:>9.4f} {best:<24} " +
              " ".join(f"{ratio:>17.2f}x" for ratio in ratios.values()))
    summary = {f"{n}, batch {b}": math.exp(sum(v) / len(v)) for (n, b), v in logs.items()}
    for (n, b), v in logs.items():
        print(f"batch {b}: {n} / convlab's best ({a.precision}), geometric mean over {len(v)} networks: "
              f"{math.exp(sum(v) / len(v)):.2f}x")
    print(f"torch {torch.__version__}, {a.threads} threads, {a.rounds} rounds of {a.trials} trials, {a.precision}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch_version": torch.__version__, "threads": a.threads, "rounds": a.rounds,
                       "precision": a.precision, "rows": rows, "geometric_mean": summary}, f, indent=1)


if __name__ == "__main__":
    main()
