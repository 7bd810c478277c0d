#!/usr/bin/env python3
"""Independent check of refresher's repeated-bisection clustering (paper 000 §3.3, I2).

Reads the vectors `cargo bench --bench cluster` writes (target/cluster-bench/vectors-N.csv:
48 feature columns, then refresher's cluster label), clusters the same vectors with
scikit-learn's BisectingKMeans (largest cluster split first, as CLUTO's -cstype=large) and
prints the I2 criterion of both clusterings:

    I2 = sum_r sum_{p in S_r} cos(p, C_r) = sum_r || sum_{p in S_r} p / ||p|| ||

computed here with NumPy, independently of the Rust code. scikit-learn's k-means is Euclidean,
so it runs on the unit-normalised rows (for unit vectors Euclidean and cosine k-means are close;
not identical). Run outside the build:

    pip install scikit-learn
    python3 scripts/cluster_check.py target/cluster-bench/vectors-10000.csv [...]
"""

import sys
import time

import numpy as np
from sklearn.cluster import BisectingKMeans


def unit_rows(x):
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def i2(unit, labels):
    total = 0.0
    for label in np.unique(labels):
        total += np.linalg.norm(unit[labels == label].sum(axis=0))
    return total


def main(paths):
    print("| pages | k (refresher) | I2 refresher | k (sklearn) | I2 sklearn | ratio | sklearn s |")
    print("|---|---|---|---|---|---|---|")
    for path in paths:
        data = np.loadtxt(path, delimiter=",", skiprows=1)
        x, ours = data[:, :-1], data[:, -1].astype(int)
        unit = unit_rows(x)
        k = len(np.unique(ours))
        start = time.time()
        theirs = BisectingKMeans(
            n_clusters=k,
            bisecting_strategy="largest_cluster",
            n_init=10,
            random_state=0,
        ).fit_predict(unit)
        seconds = time.time() - start
        ours_i2, theirs_i2 = i2(unit, ours), i2(unit, theirs)
        print(
            f"| {len(x)} | {k} | {ours_i2:.2f} | {len(np.unique(theirs))} | {theirs_i2:.2f} "
            f"| {ours_i2 / theirs_i2:.4f} | {seconds:.2f} |"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
