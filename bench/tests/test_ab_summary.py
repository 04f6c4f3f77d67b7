"""Tests of bench/ab_summary.py: the median's confidence interval and the printed summary."""
import os
import random
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction
from math import comb

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import ab_summary  # noqa: E402


def coverage(n: int, k: int) -> Fraction:
    """Exact probability that [v(k), v(n+1-k)] holds the median of n draws (k from 1)."""
    tail = sum(Fraction(comb(n, i), 2**n) for i in range(k))
    return 1 - 2 * tail


class MedianIntervalTest(unittest.TestCase):
    def test_widest_order_statistics_that_still_cover_95_percent(self):
        rng = random.Random(20261205)
        for n in range(6, 61):
            values = [rng.uniform(0.5, 2.0) for _ in range(n)]
            low, high = ab_summary.median_interval(values)
            ordered = sorted(values)
            k = ordered.index(low) + 1
            self.assertEqual(high, ordered[n - k], f"n={n}: not symmetric")
            self.assertGreaterEqual(coverage(n, k), Fraction(95, 100), f"n={n}, k={k}")
            self.assertLess(coverage(n, k + 1), Fraction(95, 100), f"n={n}: k={k} not the largest")

    def test_too_few_rounds_give_no_interval(self):
        for n in range(0, 6):
            self.assertIsNone(ab_summary.median_interval([1.0 + i for i in range(n)]))

    def test_interval_holds_a_known_median_about_95_percent_of_the_time(self):
        rng = random.Random(7)
        trials, held = 4000, 0
        for _ in range(trials):
            # log-normal around 1.08: the true median of the ratios
            values = [1.08 * rng.lognormvariate(0, 0.15) for _ in range(24)]
            low, high = ab_summary.median_interval(values)
            held += low <= 1.08 <= high
        self.assertGreater(held / trials, 0.94)
        self.assertLess(held / trials, 0.99)

    def test_summary_prints_median_ratio_and_interval(self):
        rng = random.Random(11)
        old = [rng.uniform(9, 14) for _ in range(8)]
        new = [o * rng.uniform(1.0, 1.2) for o in old]
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            for o, n in zip(old, new):
                f.write(f"old auto {o}\nnew auto {n}\n")
        try:
            out = subprocess.run(
                [sys.executable, ab_summary.__file__, f.name, "off", "on", "test"],
                check=True, capture_output=True, text=True,
            ).stdout
        finally:
            os.unlink(f.name)
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == ["auto"])
        ratios = sorted(n / o for o, n in zip(old, new))
        median = (ratios[3] + ratios[4]) / 2
        self.assertAlmostEqual(float(row[4]), median, places=3)
        # 8 rounds: k = 1 is the widest interval that keeps 95% (k = 2 covers 93%)
        self.assertEqual(row[5], f"{ratios[0]:.3f}-{ratios[7]:.3f}")


if __name__ == "__main__":
    unittest.main()
