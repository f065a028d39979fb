#!/usr/bin/env python3
"""Runs `convlab run` with --json and checks, with numpy, that every reported percentile,
mean, std, min and max is what numpy computes from the samples written beside it.

usage: check_percentiles.py CONVLAB_BINARY OUT.json
"""
import json
import subprocess
import sys

import numpy as np


def main() -> int:
    binary, out = sys.argv[1], sys.argv[2]
    subprocess.run([binary, "run", "--model", "lab-cnn", "--batch", "1,4", "--warmup", "2", "--trials", "23",
                    "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        doc = json.load(f)
    assert doc["schema"] == "convlab/1", doc["schema"]
    failures = 0
    for r in doc["results"]:
        samples = np.array(r["samples_ms"])
        assert len(samples) == r["trials"] == 23
        assert r["percentile_method"] == "linear"
        want = {f"p{q}": np.percentile(samples, q) for q in (50, 90, 95, 99)}
        want.update(mean=samples.mean(), std=samples.std(ddof=1), min=samples.min(), max=samples.max())
        for key, value in want.items():
            got = r["latency_ms"][key]
            if not np.isclose(got, value, rtol=1e-12, atol=0):
                print(f"batch {r['batch']}: {key} is {got}, numpy says {value}")
                failures += 1
    print(f"{len(doc['results'])} results checked against numpy: {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
