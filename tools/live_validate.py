#!/usr/bin/env python3
"""The live PyTorch check (run by ctest when python3 is found):

  tools/live_validate.py path/to/convlab [--seed S] [--batches 1,8]

For each network: a fresh PyTorch module with random He-normal weights and random BatchNorm
statistics (a new seed each run unless --seed or CONVLAB_LIVE_SEED is given; it is printed so a
failure can be reproduced), its state_dict saved with torch.save, exported through
export_torch.py --state-dict, then `convlab validate --kernel all` at each batch size, comparing
every layer. Prints the largest errors per kernel and network. Exit 0 when all pass, 1 when any
fails, 77 (ctest's SKIP_RETURN_CODE) when this python cannot import torch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("convlab")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("CONVLAB_LIVE_SEED", time.time_ns() % 1000003)))
    ap.add_argument("--batches", default="1,8")
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"SKIPPED: the live PyTorch check needs torch, which {sys.executable} cannot import ({e}); "
              "install python3-torch to run it", flush=True)
        return 77
    sys.path.insert(0, HERE)
    from torch_models import MODELS, init_reference_weights

    print(f"live PyTorch check: torch {torch.__version__}, seed {a.seed} (rerun with --seed {a.seed}), "
          f"batches {a.batches}", flush=True)
    failed, rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(MODELS):
            seed = a.seed + i
            state_dict = os.path.join(tmp, f"{name}.pt")
            torch.save(init_reference_weights(MODELS[name](), seed).state_dict(), state_dict)
            for batch in a.batches.split(","):
                out = os.path.join(tmp, f"{name}-{batch}")
                subprocess.run([sys.executable, os.path.join(HERE, "export_torch.py"), "--model", name, "--state-dict",
                                state_dict, "--input-seed", str(seed), "--batch", batch, "--out", out],
                               check=True, stdout=subprocess.DEVNULL)
                report = os.path.join(out, "validate.json")
                run = subprocess.run([a.convlab, "validate", "--model", name, "--kernel", "all",
                                      "--weights", os.path.join(out, "weights.safetensors"),
                                      "--input", os.path.join(out, "input.safetensors"),
                                      "--expect", os.path.join(out, "expect.safetensors"), "--json", report],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    failed.append(f"{name} batch {batch}")
                    print(run.stdout + run.stderr, flush=True)
                    if not os.path.exists(report) or os.path.getsize(report) == 0:
                        continue
                for k in json.load(open(report))["kernels"]:
                    rows.append((name, batch, k["kernel"], max(l["normalised_error"] for l in k["layers"]),
                                 max(l["max_abs_error"] for l in k["layers"]),
                                 max(l["max_abs_error"] / l["peak"] if l["peak"] else 0 for l in k["layers"]),
                                 f"{k['top1_agree']}/{k['items']}", "pass" if k["pass"] else "FAIL"))
    print(f"{'model':<16}{'batch':>6}  {'kernel':<24}{'max norm err':>14}{'max abs err':>14}{'abs/peak':>11}"
          f"{'top-1':>7}  result")
    for r in rows:
        print(f"{r[0]:<16}{r[1]:>6}  {r[2]:<24}{r[3]:>14.3e}{r[4]:>14.3e}{r[5]:>11.2e}{r[6]:>7}  {r[7]}")
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    print(f"all {len(rows)} kernel x network x batch validations pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
