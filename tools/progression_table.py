#!/usr/bin/env python3
"""The README's kernel progression tables, regenerated from a measurement, never edited by hand.

  build/convlab conv --problem mb32ic64ih56oc64oh56kh3ph1 --kernel all --interleave --json cpu.json
  tools/progression_table.py cpu.json --readme README.md

reads a `convlab conv --json` document (schema convlab/1) and writes, for the reference layer,
one row per kernel of the backend that ran: p50, GFLOP/s, % of the peak measured in the same run
and the speed ratio to the baseline measured in the same run (oneDNN on the CPU; cuDNN from
tools/torch_gpu_bench.py's JSON, --torch, on a GPU: FP32 kernels against cuDNN FP32, TF32 ones
against cuDNN TF32). With --readme, the table replaces what stands between the README's markers
<!-- progression:BACKEND --> and <!-- /progression:BACKEND -->; without, it is printed.
Standard library only: any python3 runs it.
"""
import argparse
import json
import re
import sys

REFERENCE_LAYER = "mb32ic64ih56oc64oh56kh3ph1"


def fail(message):
    sys.exit(f"progression_table.py: {message}")


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read '{path}': {e}")
    if doc.get("schema") != "convlab/1" or "results" not in doc:
        fail(f"'{path}' is not a convlab/1 results file")
    return doc


def cudnn_gflops(torch_doc, problem, kernel):
    precision = "tf32" if "tf32" in kernel else "fp32"
    for t in torch_doc.get("layers", []):
        if t["problem"] == problem and t["precision"] == precision:
            return precision, t["gflops"]
    return precision, None


def table(doc, problem, torch_doc):
    rows = [r for r in doc["results"] if r.get("problem") == problem and r["status"] == "ok"]
    if not rows:
        fail(f"no measured row of {problem} in the results (run `convlab conv --problem {problem} --json F`)")
    backend = next(r["backend"] for r in rows if not r["kernel"].startswith("onednn."))
    gpu = backend != "cpu"
    baseline = next((r for r in rows if r["kernel"] == "onednn.conv"), None)

    def ms(r):  # the device's own clock where it has one
        return (r.get("device_latency_ms") or r["latency_ms"])["p50"]

    ctx, first = doc["context"], rows[0]
    # The oracle is timed alone after the rounds, so the first row may not say the run interleaved.
    interleaved = " --interleave" if any(r.get("interleaved") for r in rows) else ""
    command = (f"build/convlab conv{' --backend ' + backend if gpu else ''} --problem {problem} --kernel all{interleaved}"
               f" --warmup {first['warmup']} --trials {first['trials']} --json F")
    machine = ctx.get("gpu", ctx.get("cuda")) if gpu else f"{ctx['cpu_model']}, {ctx['build_isa']}"
    peak = ctx.get("peak", {}).get("fma_gflops_all_threads")
    lines = [f"`{command}` on {machine}, {first['threads']} threads, commit {ctx['git_commit'][:7]}{' (dirty)' if ctx.get('git_dirty') else ''}, "
             f"{ctx['date_utc'][:10]}" + (f"; measured FMA peak {peak:.1f} GFLOP/s" if peak and not gpu else "") + ":",
             "",
             f"| kernel | p50 ms{' (device)' if gpu else ''} | GFLOP/s | % of peak | "
             f"{'vs cuDNN' if gpu else 'vs oneDNN'} |",
             "| --- | ---: | ---: | ---: | ---: |"]
    effective = False
    for r in rows:
        gflops = r["flops_per_item"] * r["batch"] / (ms(r) * 1e6)
        # The row's own flag: cpu.auto's rate is effective too when it chose a Winograd kernel.
        winograd = "effective_flops" in r.get("flags", []) or "winograd" in r["kernel"]
        effective = effective or winograd
        mark = "*" if winograd else ""
        percent = f"{r['percent_of_peak']:.0f}%{mark}" if not gpu and r.get("percent_of_peak") else "–"
        if gpu:
            precision, ref = cudnn_gflops(torch_doc, problem, r["kernel"])
            ratio = f"{gflops / ref:.2f}x ({precision})" if ref else "–"
        else:
            ratio = f"{ms(baseline) / ms(r):.2f}x" if baseline else "– (built without oneDNN)"
        lines.append(f"| {r['kernel']} | {ms(r):.3f} | {gflops:.1f}{mark} | {percent} | {ratio} |")
    if effective:
        lines += ["", "\\* effective: Winograd does fewer multiplies than the direct convolution whose FLOPs are "
                  "counted, so its rate can pass the machine's peak."]
    return backend, "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="a `convlab conv --json` file")
    ap.add_argument("--problem", default=REFERENCE_LAYER, help="the layer to tabulate (default: the reference layer)")
    ap.add_argument("--torch", help="GPU: tools/torch_gpu_bench.py's JSON, for the ratio to cuDNN")
    ap.add_argument("--readme", help="rewrite this file's table between its markers instead of printing")
    a = ap.parse_args()
    torch_doc = load_torch(a.torch) if a.torch else {}
    backend, text = table(load(a.results), a.problem, torch_doc)
    if not a.readme:
        print(text)
        return
    begin, end = f"<!-- progression:{backend} -->", f"<!-- /progression:{backend} -->"
    with open(a.readme) as f:
        readme = f.read()
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(readme):
        fail(f"'{a.readme}' has no {begin} ... {end} markers")
    with open(a.readme, "w") as f:
        f.write(pattern.sub(lambda _: f"{begin}\n{text}\n{end}", readme))


def load_torch(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read '{path}': {e}")


if __name__ == "__main__":
    main()
