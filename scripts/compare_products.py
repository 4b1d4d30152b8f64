#!/usr/bin/env python3
"""Compare the NPY products of two runs of one job: the relative L2 difference of each (the norm of the
difference over the norm of the second), or, with --identical, whether the files are equal byte for byte.
Exits 1 when a product is missing, differs by more than --tolerance, or (--identical) is not equal.

    scripts/compare_products.py A B [--tolerance 1e-5] [--identical]
"""
import argparse
import pathlib
import sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("a")
p.add_argument("b")
p.add_argument("--tolerance", type=float, default=1e-5)
p.add_argument("--identical", action="store_true")
args = p.parse_args()
a, b = pathlib.Path(args.a), pathlib.Path(args.b)
names = sorted(f.name for f in b.glob("*.npy"))
if not names:
    sys.exit(f"no .npy products in {b}")
worst, ok = 0.0, True
for name in names:
    if not (a / name).exists():
        print(f"{a / name}: missing")
        ok = False
        continue
    if args.identical:
        same = (a / name).read_bytes() == (b / name).read_bytes()
        ok &= same
        if not same:
            print(f"{name}: files differ")
        continue
    x = np.load(a / name).astype(np.float64)
    y = np.load(b / name).astype(np.float64)
    e = np.linalg.norm(x - y) / np.linalg.norm(y)
    worst = max(worst, e)
    ok &= bool(e <= args.tolerance)
what = "identical" if args.identical else f"worst relative L2 {worst:.2e} (tolerance {args.tolerance:g})"
print(f"{len(names)} products, {what}: {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
