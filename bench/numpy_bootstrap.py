#!/usr/bin/python3
"""The report's base-clustered bootstrap written in numpy, for comparison with bench_report.

Reads DIR/frames.json (written by build/release/bench/bench_report): for each resampling frame
(all bases for the orbit gap, each family's paired bases for a family gap) the per-base columns
of every system and layer (canonical correct, orbit/transformed correct, their difference). Runs
the same bootstrap the fast numpy way: for each draw, resample counts per base from a multinomial
(n picks among n bases, equal probabilities), multiply the counts matrix by the columns, take
2.5% / 97.5% percentiles (numpy's default 'linear' method = the report's inclusive quantiles).
Prints the time per system and per full run, and compares the gap intervals with DIR/report/
metrics.json (they agree up to Monte Carlo error: the two use different random streams).

Usage: /usr/bin/python3 bench/numpy_bootstrap.py /tmp/numcheck_bench_report [--repeat 3]
"""
import json
import sys
import time

import numpy as np

FAMILIES = ["fraction", "scientific", "percent", "words", "unit"]
LAYERS = ["strict", "audit"]


def bootstrap(frames, draws, seed, chunk=1000):
    """All frames, all quantities: returns {frame: (lo, hi) arrays over quantities}."""
    rng = np.random.default_rng(seed)
    out = {}
    for fr in frames:
        n = fr["n"]
        X = np.asarray(fr["columns"], dtype=np.float64).T  # n x q
        totals = np.empty((draws, X.shape[1]))
        p = np.full(n, 1.0 / n)
        for start in range(0, draws, chunk):
            b = min(chunk, draws - start)
            counts = rng.multinomial(n, p, size=b)  # b x n resample counts per base
            totals[start:start + b] = counts @ X
        rates = totals / n
        lo, hi = np.percentile(rates, [2.5, 97.5], axis=0)
        out[fr["name"]] = (lo, hi)
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    d = sys.argv[1]
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    with open(f"{d}/frames.json") as f:
        data = json.load(f)
    draws, systems, frames = data["draws"], data["systems"], data["frames"]

    times = []
    for r in range(repeat):
        t0 = time.perf_counter()
        res = bootstrap(frames, draws, 20260725 + r)
        times.append(time.perf_counter() - t0)
    best = min(times)
    print(f"numpy {np.__version__}: {draws} draws, {systems} systems, both layers, "
          f"{len(frames)} frames")
    print(f"numpy bootstrap: best of {repeat}: {best:.3f} s total, {best / systems * 1000:.1f} ms "
          f"per system (all runs: {', '.join(f'{t:.3f}' for t in times)} s)")

    # Compare gap intervals with the report's.
    try:
        with open(f"{d}/report/metrics.json") as f:
            m = json.load(f)
    except FileNotFoundError:
        return 0
    names = m["system_order"]
    worst = 0.0
    for s, name in enumerate(names):
        for l, layer in enumerate(LAYERS):
            q = (s * 2 + l) * 3 + 2  # the gap column
            lj = m["systems"][name][layer]
            pairs = [("orbit", lj["orbit_gap"]["ci"])]
            pairs += [(fam, lj["families"][fam]["ci"]) for fam in FAMILIES if fam in lj["families"]]
            for frame, ci in pairs:
                lo, hi = res[frame]
                worst = max(worst, abs(lo[q] - ci[0]), abs(hi[q] - ci[1]))
    print(f"largest difference between numpy and numcheck gap interval endpoints: "
          f"{worst * 100:.2f} points (Monte Carlo error of 10,000 draws)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
