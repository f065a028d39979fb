#!/usr/bin/env python3
"""Reruns the commands of docs/lab-batch-1-vs-32.md and prints every number the handout quotes.

  tools/handout_numbers.py                      # measure (about two minutes on 2 cores), print
  tools/handout_numbers.py --check-doc          # is every command below printed in the handout?
  tools/handout_numbers.py --quick              # the same commands with few trials: does it all run?

The handout is regenerated from this output, never edited by hand: each quoted figure is printed
under the command that produced it. Run it on a quiet machine (the first line says whether the
machine was busy); --quick numbers are for testing the script and mean nothing.
Standard library only: any python3 runs it.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HANDOUT = os.path.join(HERE, "..", "docs", "lab-batch-1-vs-32.md")
KERNELS = "cpu.auto,cpu.02_direct_xsimd,cpu.01_im2col_eigen"
LAB_RUN = (f"convlab run --model lab-cnn --kernel {KERNELS} --batch 1,8,32 --warmup 10 --trials 200 "
           "--threads 2 --per-layer --json {file}")
# Arrival rates: far under the capacity, R (90% of the batch-1 capacity that run_a measured: near
# it, batching starts to matter, whatever the machine) and far over any capacity (50000/s was
# under a Zen 5's, 58000/s at batch 32).
RATES = ("500", "R", "500000")
CONV_REPEATS = 3

# The handout's commands, in its order, exactly as it prints them.
COMMANDS = {
    "run_a": LAB_RUN.format(file="a.json"),
    "report": "convlab report a.json -o report.html",
    "one_thread": ("convlab run --model lab-cnn --kernel cpu.02_direct_xsimd --batch 1,8,32 --warmup 10 --trials 200 "
                   "--threads 1 --json one.json"),
    "run_b": LAB_RUN.format(file="b.json"),
    "compare": "convlab compare a.json b.json",
    "cold": ("convlab run --model lab-cnn --kernel cpu.auto,cpu.02_direct_xsimd --batch 1,32 --warmup 10 "
             "--trials 200 --threads 2 --fresh-process 20 --auto-cache off --json cold.json"),
    "cold_remembered": ("convlab run --model lab-cnn --kernel cpu.auto --batch 1,32 --warmup 10 --trials 200 "
                        "--threads 2 --fresh-process 20 --auto-cache choices.tsv --json remembered.json"),
    "conv": ("convlab conv --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.02_direct_xsimd,onednn.conv "
             "--interleave --threads 2 --json conv.json"),
    **{f"policy_{rate}": f"convlab policy --from a.json --kernel cpu.auto --rate {rate} --slo-p99-ms 10"
       for rate in RATES},
    "check": "convlab run --model lab-cnn --backend cpu --kernel cpu.auto --batch B --threads 2 --trials 200",
}
# --quick: the same commands, fewer repetitions.
QUICK = [("--trials 200", "--trials 20"), ("--warmup 10", "--warmup 1"), ("--fresh-process 20", "--fresh-process 2"),
         ("--interleave", "--interleave --warmup 1 --trials 3")]


def fail(message):
    sys.exit(f"handout_numbers.py: {message}")


def normalise(text):
    """The handout's shell blocks with line continuations joined and spaces collapsed."""
    return re.sub(r"\s+", " ", text.replace("\\\n", " "))


def check_doc(path):
    try:
        with open(path) as f:
            doc = normalise(f.read())
    except OSError as e:
        fail(f"cannot read the handout '{path}': {e}")
    missing = [name for name, command in COMMANDS.items() if command not in doc]
    for name in missing:
        print(f"the handout does not print the '{name}' command: {COMMANDS[name]}")
    if missing:
        sys.exit(1)
    print(f"all {len(COMMANDS)} commands are printed in {os.path.relpath(path)}")


class Runner:
    def __init__(self, convlab, workdir, quick):
        self.convlab, self.workdir, self.quick = convlab, workdir, quick

    def __call__(self, command, allowed=(0,)):
        """Runs a handout command (its `convlab` is our binary) in the work folder; returns stdout."""
        for old, new in QUICK if self.quick else []:
            command = command.replace(old, new)
        argv = [self.convlab] + shlex.split(command)[1:]
        done = subprocess.run(argv, cwd=self.workdir, capture_output=True, text=True)
        if done.returncode not in allowed:
            fail(f"`{command}` exited {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}")
        return done

    def load(self, name):
        with open(os.path.join(self.workdir, name)) as f:
            return json.load(f)


def rows_by(doc):
    return {(r["kernel"], r["batch"]): r for r in doc["results"] if r["status"] == "ok"}


def choices(doc):
    """What cpu.auto chose for each conv layer at each batch, from a results file."""
    out = []
    for (kernel, batch), r in sorted(rows_by(doc).items()):
        if kernel == "cpu.auto":
            # "conv1: chose cpu.02_direct_xsimd: ..." -> "conv1 cpu.02"; "forward: chose 1 thread: ..." -> "forward 1 thread"
            picks = [c.split(": chose ")[0] + " " + re.split(r"[_:]", c.split(": chose ")[1])[0]
                     for c in r.get("kernel_choices", [])]
            out.append(f"batch {batch}: " + ", ".join(picks))
    return "; ".join(out)


def heading(name, command):
    print(f"\n## {name}\n$ {command}")


def lab_table(doc):
    print("| kernel | batch | p50 ms | p95 ms | p99 ms | ms/item | items/s | cold ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in doc["results"]:
        lat = r["latency_ms"]
        print(f"| {r['kernel']} | {r['batch']} | {lat['p50']:.3f} | {lat['p95']:.3f} | {lat['p99']:.3f} | "
              f"{r['per_item_ms']:.4f} | {r['throughput_items_per_s']:.0f} | {r['cold_ms']:.3f} |")


def section_run(run):
    heading("1. the run", COMMANDS["run_a"])
    run(COMMANDS["run_a"])
    doc = run.load("a.json")
    ctx = doc["context"]
    print(f"machine: {ctx['cpu_model']}, {ctx['logical_cpus']} logical CPUs, busy before the run: "
          f"{ctx['machine_busy']} ({ctx['other_busy_cores']:.2f} cores busy with other work); "
          f"peak {ctx['peak']['fma_gflops_all_threads']:.0f} GFLOP/s on {ctx['peak']['threads']} threads")
    lab_table(doc)
    rows = rows_by(doc)
    print("\n2. per request vs per image:")
    for kernel in KERNELS.split(","):
        one, eight, big = (rows[(kernel, b)] for b in (1, 8, 32))
        print(f"  {kernel}: batch 32 takes {big['latency_ms']['p50'] / one['latency_ms']['p50']:.0f}x the p50 of batch 1;"
              f" ms/item {one['per_item_ms']:.4f} -> {eight['per_item_ms']:.4f} -> {big['per_item_ms']:.4f}"
              f" (batch 1 / batch 8: {one['per_item_ms'] / eight['per_item_ms']:.2f}x)")
    print("  tails (p99 / p50), widest first:")
    tails = sorted(doc["results"], key=lambda r: r["latency_ms"]["p99"] / r["latency_ms"]["p50"], reverse=True)
    for r in tails[:3]:
        lat = r["latency_ms"]
        print(f"    {r['kernel']} batch {r['batch']}: p50 {lat['p50']:.3f}, p95 {lat['p95']:.3f}, p99 {lat['p99']:.3f} ms"
              f" ({lat['p99'] / lat['p50']:.2f}x); flags: {', '.join(r['flags']) or 'none'}")
    layers = rows[("cpu.02_direct_xsimd", 1)]["per_layer"]
    top = sorted(layers, key=lambda l: l["share"], reverse=True)
    print("  per layer, cpu.02_direct_xsimd at batch 1: "
          + ", ".join(f"{l['layer']} {100 * l['share']:.1f}% ({1000 * l['p50_ms']:.1f} us)" for l in top))
    print(f"  cpu.auto chose: {choices(doc)}")
    heading("1. the report", COMMANDS["report"])
    run(COMMANDS["report"])
    print("report.html written")
    return doc


def section_one_thread(run):
    heading("2. one thread", COMMANDS["one_thread"])
    run(COMMANDS["one_thread"])
    one, two = rows_by(run.load("one.json")), rows_by(run.load("a.json"))
    for batch in (1, 8, 32):
        a, b = one[("cpu.02_direct_xsimd", batch)], two[("cpu.02_direct_xsimd", batch)]
        print(f"  cpu.02_direct_xsimd batch {batch}: ms/item {a['per_item_ms']:.4f} on 1 thread, {b['per_item_ms']:.4f} on 2"
              f" (a.json): the second thread {a['per_item_ms'] / b['per_item_ms']:.2f}x the speed")


def section_compare(run):
    heading("3. a rerun", COMMANDS["run_b"])
    run(COMMANDS["run_b"])
    print(f"  cpu.auto chose: {choices(run.load('b.json'))}")
    heading("3. compare", COMMANDS["compare"])
    out = run(COMMANDS["compare"]).stdout
    verdicts = re.findall(r"^(lab-cnn \S+ batch \d+)\s+\d+\s+\d+\s+\S+ ms\s+\S+ ms\s+(\S+)\s+(\[[^\]]+\])\s+\S+\s+(.+)$",
                          out, re.M)
    if not verdicts:
        fail("`convlab compare` printed no rows")
    counts = {}
    for *_, verdict in verdicts:
        counts[verdict] = counts.get(verdict, 0) + 1
    print("verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    for row, ratio, interval, verdict in verdicts:
        print(f"  {row}: B/A {ratio} {interval} {verdict}")


def print_fresh(rows):
    for r in rows:
        fresh = r["fresh_process"]
        print(f"  {r['kernel']} batch {r['batch']}: warm p50 {r['latency_ms']['p50']:.3f} ms, cold {r['cold_ms']:.3f} ms;"
              f" {fresh['runs']} fresh processes: start to first result p50 {fresh['start_to_result_ms']['p50']:.1f} ms"
              f" (p95 {fresh['start_to_result_ms']['p95']:.1f}), first forward alone p50"
              f" {fresh['first_forward_ms']['p50']:.3f} ms")


def section_cold(run):
    heading("4. cold starts", COMMANDS["cold"])
    run(COMMANDS["cold"])
    print_fresh(run.load("cold.json")["results"])
    heading("4. cold starts, cpu.auto's choices remembered", COMMANDS["cold_remembered"])
    run(COMMANDS["cold_remembered"])
    print_fresh(run.load("remembered.json")["results"])


def section_conv(run):
    heading(f"3. two kernels, taking turns ({CONV_REPEATS} runs)", COMMANDS["conv"])
    for repeat in range(CONV_REPEATS):
        done = run(COMMANDS["conv"], allowed=(0, 4))
        if done.returncode == 4:
            print("  skipped: this build has no oneDNN baseline")
            return
        doc = run.load("conv.json")
        rows = {r["kernel"]: r for r in doc["results"] if r["status"] == "ok"}
        ours, onednn = rows["cpu.02_direct_xsimd"], rows["onednn.conv"]
        print(f"  run {repeat + 1}: cpu.02_direct_xsimd p50 {ours['latency_ms']['p50']:.1f} ms, onednn.conv p50"
              f" {onednn['latency_ms']['p50']:.1f} ms: cpu.02 at {onednn['latency_ms']['p50'] / ours['latency_ms']['p50']:.2f}x"
              f" oneDNN's speed ({ours['percent_of_peak']:.0f}% and {onednn['percent_of_peak']:.0f}% of the"
              f" {doc['context']['peak']['fma_gflops_all_threads']:.0f} GFLOP/s peak)")


def service_time(policy_output, batch):
    """The p50 the policy used for `batch`: measured, or interpolated between two measured sizes."""
    table = policy_output.split("service time per batch", 1)[1].split("\n\n", 1)[0]
    sizes = {int(b): float(p50) for b, p50 in re.findall(r"^\s+(\d+)\s+\d+\s+(\S+)", table, re.M)}
    if batch in sizes:
        return f"p50 {sizes[batch]:.3f} ms, measured"
    below, above = max(b for b in sizes if b < batch), min(b for b in sizes if b > batch)
    at = sizes[below] + (sizes[above] - sizes[below]) * (batch - below) / (above - below)
    return (f"p50 {at:.3f} ms, interpolated between batch {below} ({sizes[below]:.3f} ms) and batch {above}"
            f" ({sizes[above]:.3f} ms)")


def section_policy(run):
    batch1 = rows_by(run.load("a.json"))[("cpu.auto", 1)]["latency_ms"]
    capacity = 1000 / batch1["mean"]  # as `convlab policy` computes it: the slow tail takes the worker's time too
    near = int(0.9 * capacity / 100) * 100 or max(1, int(0.9 * capacity))  # in hundreds, unless it is that slow
    for rate in RATES:
        command = COMMANDS[f"policy_{rate}"]
        heading(f"5. policy at {rate}/s", command)
        if rate == "R":
            command = command.replace("--rate R", f"--rate {near}")
            print(f"  R = {near}/s: 90% of cpu.auto's batch-1 capacity in a.json, {capacity:.0f}/s")
        out = run(command).stdout
        alone = re.search(r"^\s+1\s+0\s+(\S+)\s+(\S+)\s+(\S+)\s+\S+\s+(\d+%)", out, re.M)
        if alone:
            print(f"  batch 1 only (max batch 1): p50 {alone.group(1)}, p99 {alone.group(3)} ms, utilisation {alone.group(4)}")
        for line in out.splitlines():
            if line.startswith(("recommended:", "none can:")):
                print("  " + line)
        check = re.search(r"check it against a real run: (convlab run [^(]+?) \(", out)
        if check and rate == "R":
            batch = int(re.search(r"--batch (\d+)", check.group(1)).group(1))
            if check.group(1) != COMMANDS["check"].replace("--batch B", f"--batch {batch}"):
                fail(f"`convlab policy` prints a check command the handout does not: {check.group(1)}")
            run(check.group(1) + " --json check.json")
            p50 = run.load("check.json")["results"][0]["latency_ms"]["p50"]
            print(f"  checked with B = {batch}: p50 {p50:.3f} ms; the policy's service time: {service_time(out, batch)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--convlab", default=os.path.join(HERE, "..", "build", "convlab"), help="the convlab binary")
    ap.add_argument("--quick", action="store_true", help="few trials: checks that every command runs")
    ap.add_argument("--check-doc", nargs="?", const=HANDOUT, metavar="HANDOUT",
                    help="only check that the handout prints every command")
    args = ap.parse_args()
    if args.check_doc:
        return check_doc(args.check_doc)
    if not os.access(args.convlab, os.X_OK):
        fail(f"no convlab binary at '{args.convlab}' (build it, or pass --convlab PATH)")
    with tempfile.TemporaryDirectory(prefix="convlab-handout-") as workdir:
        run = Runner(os.path.abspath(args.convlab), workdir, args.quick)
        if args.quick:
            print("--quick: few trials; these numbers mean nothing")
        section_run(run)
        section_one_thread(run)
        section_compare(run)
        section_conv(run)
        section_cold(run)
        section_policy(run)


if __name__ == "__main__":
    main()
