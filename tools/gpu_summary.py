#!/usr/bin/env python3
"""Summarises bench/gpu-check.sh: merges convlab's JSON documents into OUT/convlab_cuda.json and
writes OUT/summary.txt, the ratios the CUDA issue sets as targets, each from numbers measured in
the same call on the same GPU (host-timed medians on both sides unless it says device):
  batch 1:  PyTorch eager FP32 / our best CUDA-Graph forward        (target >= 10)
  batch 32: PyTorch eager FP32 / our best eager FP32 forward        (target >= 1.0)
  largest layer: our TF32 kernel's GFLOP/s / cuDNN TF32's (device)  (target >= 0.5)
and, from the same call, what fusing convs with the add or pool after them saves at batch 1.
"""
import argparse
import glob
import json
import os


def load(pattern):
    return [(os.path.basename(p), json.load(open(p))) for p in sorted(glob.glob(pattern))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    runs, convs, validations = load(f"{a.work}/run-*.json"), load(f"{a.work}/conv-*.json"), load(f"{a.work}/validate-*.json")
    torch = json.load(open(a.torch)) if os.path.exists(a.torch) else {"networks": [], "layers": []}
    with open(os.path.join(a.out, "convlab_cuda.json"), "w") as f:
        json.dump({"runs": dict(runs), "conv": dict(convs), "validate": dict(validations)}, f, indent=1)

    lines = [f"GPU: {torch.get('device', '?')}, torch {torch.get('torch_version', '?')}, cuDNN {torch.get('cudnn_version', '?')}", ""]
    lines.append("validation against PyTorch on the GPU (FP32, TF32 off):")
    for name, doc in validations:
        verdicts = ", ".join(f"{k['kernel']} {'PASS' if k['pass'] else 'FAIL'}" for k in doc.get("kernels", []))
        lines.append(f"  {doc.get('model', name)}: {verdicts}")
    lines.append("")

    def torch_ms(model, batch, precision):
        for r in torch["networks"]:
            if r["model"] == model and r["batch"] == batch and r["precision"] == precision:
                return r["p50_ms"]
        return None

    lines.append(f"{'model':<15} {'batch':>5} {'ours best (kernel, mode)':<38} {'ours ms':>9} {'torch fp32':>10} "
                 f"{'torch tf32':>10} {'torch fp32 / ours':>17}")
    for _, doc in runs:
        ok = [r for r in doc["results"] if r["status"] == "ok"]
        for model in sorted({r["model"] for r in ok}):
            for batch, mode, target in ((1, "graph", 10.0), (1, "eager", None), (32, "eager", 1.0), (32, "graph", None)):
                rows = [r for r in ok if r["model"] == model and r["batch"] == batch and r.get("mode") == mode
                        and "tf32" not in r["kernel"]]  # FP32 against FP32
                if not rows:
                    continue
                best = min(rows, key=lambda r: r["latency_ms"]["p50"])
                t32, t_tf = torch_ms(model, batch, "fp32"), torch_ms(model, batch, "tf32")
                ratio = t32 / best["latency_ms"]["p50"] if t32 else float("nan")
                verdict = "" if target is None else (" meets" if ratio >= target else " misses") + f" target {target:g}"
                lines.append(f"{model:<15} {batch:>5} {best['kernel'] + ' ' + mode:<38} {best['latency_ms']['p50']:>9.4f} "
                             f"{t32 or float('nan'):>10.4f} {t_tf or float('nan'):>10.4f} {ratio:>16.2f}x{verdict}")
    lines.append("")
    lines.append("fusion: cuda.auto at batch 1, fused (conv + residual add / pool) against every layer apart (--no-fuse)")
    unfused = dict(load(f"{a.work}/nofuse-*.json"))
    for name, doc in unfused.items():
        fused = dict(runs).get(name.replace("nofuse-", "run-"), {"results": []})
        for mode in ("graph", "eager"):
            def p50(d):
                rows = [r for r in d["results"] if r["status"] == "ok" and r["kernel"] == "cuda.auto" and r["batch"] == 1
                        and r.get("mode") == mode]
                return rows[0]["latency_ms"]["p50"] if rows else float("nan")
            on, off = p50(fused), p50(doc)
            lines.append(f"  {doc.get('results', [{}])[0].get('model', name):<15} {mode:<6} fused {on:.4f} ms, apart {off:.4f} ms: "
                         f"apart / fused {off / on:.2f}")
    lines.append("")
    lines.append("int8 networks on the device: the fastest int8 row against the fastest FP32 row of the same run (eager)")
    for name, doc in load(f"{a.work}/int8-run-*.json"):
        ok = [r for r in doc["results"] if r["status"] == "ok" and r.get("mode") == "eager"]
        for batch in sorted({r["batch"] for r in ok}):
            best = {}
            for r in ok:
                if r["batch"] == batch and (r["precision"] not in best or r["latency_ms"]["p50"] < best[r["precision"]]["latency_ms"]["p50"]):
                    best[r["precision"]] = r
            if "int8" in best and "fp32" in best:
                i8, f32 = best["int8"], best["fp32"]
                lines.append(f"  {i8['model']:<15} batch {batch:>3}: int8 {i8['kernel']} {i8['latency_ms']['p50']:.4f} ms, fp32 "
                             f"{f32['kernel']} {f32['latency_ms']['p50']:.4f} ms: {f32['latency_ms']['p50'] / i8['latency_ms']['p50']:.2f}x")
    for name, doc in load(f"{a.work}/int8-validate-*.json"):
        verdicts = ", ".join(f"{k['kernel']} {'PASS' if k['pass'] else 'FAIL'}" for k in doc.get("kernels", []))
        lines.append(f"  validate int8 {doc.get('model', name)} against PyTorch's quantised model: {verdicts}")
    lines.append("")
    lines.append("single layers (device time): GFLOP/s, ours against cuDNN")
    for _, doc in convs:
        for r in doc["results"]:
            if r["status"] != "ok":
                continue
            gflops = r["flops_per_item"] * r["batch"] / (r["device_latency_ms"]["p50"] * 1e6)
            precision = "int8" if r.get("precision") == "int8" else "tf32" if "tf32" in r["kernel"] else "fp32"
            ref = [t for t in torch["layers"] if t["precision"] == precision and t["problem"] == r["problem"]]
            ratio = f"{gflops / ref[0]['gflops']:.2f}x cuDNN {precision} ({ref[0]['gflops']:.0f} GFLOP/s)" if ref else ""
            lines.append(f"  {r['problem']:<32} {r['kernel']:<26} {gflops:>9.0f} GFLOP/s  {ratio}")
    for t in torch["layers"]:
        lines.append(f"  cuDNN {t['precision']} {t['problem']:<32} {t['gflops']:>9.0f} GFLOP/s (device {t['device_p50_ms']:.4f} ms)")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
