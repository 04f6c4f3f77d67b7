"""Tests of bench/settings_summary.py: ratios to OpenMPI paired by round, and their interval."""
import os
import random
import statistics
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import settings_summary  # noqa: E402


def rows(lines: list[str]) -> dict[tuple[str, int], list[str]]:
    table = settings_summary.summarise(lines)
    return {(r.split()[0], int(r.split()[1])): r.split() for r in table[1:]}


class SettingsSummaryTest(unittest.TestCase):
    def test_rounds_pair_with_openmpi_in_run_order(self):
        rng = random.Random(20261207)
        lines, mpi, ring = [], [], []
        for k in range(1, 10):
            # a drifting host: each round's load moves both sides alike
            load = rng.uniform(0.6, 1.8)
            m, r = 1000 * load * rng.uniform(0.97, 1.03), 1100 * load * rng.uniform(0.97, 1.03)
            mpi.append(m)
            ring.append(r)
            lines += [f"ring 2097152 {r} {k}\n", f"openmpi-tcp 2097152 {m} {k}\n"]
        row = rows(lines)[("ring", 2097152)]
        ratios = sorted(r / m for r, m in zip(ring, mpi))
        self.assertAlmostEqual(float(row[2]), statistics.median(ring), places=1)
        self.assertEqual(row[3], f"{statistics.median(ring) / statistics.median(mpi):.2f}")
        self.assertEqual(row[4], f"{ratios[4]:.3f}")
        # 9 rounds: k = 2 is the widest interval that keeps 95% (96.1%; k = 3 covers 82%)
        self.assertEqual(row[5], f"{ratios[1]:.3f}-{ratios[7]:.3f}")
        self.assertEqual(len(row), 6 + 9)

    def test_a_round_without_a_line_pairs_by_round_not_by_position(self):
        lines = []
        for k, (auto, mpi) in enumerate([(900, 1000), (2400, 2000), (880, 1100)], start=1):
            if k != 2:  # round 2's engine start failed: only OpenMPI's line
                lines.append(f"auto 1048576 {auto} {k}\n")
            lines.append(f"openmpi-tcp 1048576 {mpi} {k}\n")
        row = rows(lines)[("auto", 1048576)]
        self.assertEqual(row[4], f"{(0.9 + 0.8) / 2:.3f}")

    def test_openmpi_row_and_a_run_without_openmpi_have_no_ratios(self):
        times = (50.5, 52.0, 49.0)
        lines = [f"{n} 65536 {t} {k}\n" for k, t in enumerate(times, 1) for n in ("new", "old")]
        table = rows(lines)
        self.assertEqual(table[("new", 65536)][3:6], ["-", "-", "-"])
        mpi = [f"openmpi-tcp 65536 {t} {k}\n" for k, t in enumerate((60.0, 61.0, 59.0), 1)]
        with_mpi = rows(lines + mpi)
        self.assertEqual(with_mpi[("openmpi-tcp", 65536)][3:6], ["1.00", "-", "-"])
        self.assertEqual(with_mpi[("new", 65536)][5], "n/a")

    def test_script_prints_the_table(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("auto 1048576 900 1\nopenmpi-tcp 1048576 1000 1\n")
        try:
            out = subprocess.run(
                [sys.executable, settings_summary.__file__, f.name],
                check=True, capture_output=True, text=True,
            ).stdout.splitlines()
        finally:
            os.unlink(f.name)
        self.assertEqual(out[1].split()[:6], ["auto", "1048576", "900.0", "0.90", "0.900", "n/a"])


if __name__ == "__main__":
    unittest.main()
