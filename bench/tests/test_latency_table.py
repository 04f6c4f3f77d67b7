"""Tests of bench/latency_table.py: the ratio cells and the passes each setup won."""
import io
import json
import os
import random
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import latency_table  # noqa: E402

SIZES = [8, 32 << 10, 1 << 20]


def write_run(out, setup, n, p, times):
    rows = [{"size": s, "time_us": t, "busbw_GBps": s / t / 1e3, "wrong": 0} for s, t in zip(SIZES, times)]
    with open(os.path.join(out, f"run-{setup}-n{n}-p{p}.json"), "w") as f:
        json.dump({"rows": rows}, f)


def table_rows(text):
    """{(ranks, size text): cells} from the printed markdown table."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 2 and cells[0].isdigit():
            rows[(int(cells[0]), cells[1])] = cells[2:]
    return rows


class PassesWonTest(unittest.TestCase):
    def test_pairs_passes_by_number_not_by_order(self):
        mine = [{"pass": p, "time_us": t} for p, t in [(10, 5.0), (2, 9.0), (1, 3.0)]]
        peer = [{"pass": p, "time_us": t} for p, t in [(1, 4.0), (2, 8.0), (10, 5.0)]]
        self.assertEqual(latency_table.passes_won(mine, peer), (2, 3))

    def test_a_pass_the_peer_lacks_is_not_counted(self):
        mine = [{"pass": 1, "time_us": 1.0}, {"pass": 2, "time_us": 1.0}]
        peer = [{"pass": 2, "time_us": 3.0}]
        self.assertEqual(latency_table.passes_won(mine, peer), (1, 1))

    def test_table_gives_the_best_setups_ratio_and_its_passes_won(self):
        rng = random.Random(20261206)
        passes = 12  # run-...-p10.json sorts before p2 by name: pairing must go by number
        times = {}
        with tempfile.TemporaryDirectory() as out:
            for setup, scale in (("socket-auto", 1.0), ("socket-rd", 1.3), ("mpi-tcp", 1.05)):
                for p in range(1, passes + 1):
                    t = [rng.uniform(0.7, 1.4) * scale * (10 + s / 1000) for s in SIZES]
                    times[(setup, p)] = t
                    write_run(out, setup, 4, p, t)
            os.remove(os.path.join(out, "run-mpi-tcp-n4-p7.json"))  # a failed run leaves no JSON
            buf = io.StringIO()
            with redirect_stdout(buf):
                latency_table.main(out, [])
        rows = table_rows(buf.getvalue())
        peer_passes = [p for p in range(1, passes + 1) if p != 7]
        for i, size in enumerate(SIZES):
            def median(setup, ps):
                v = sorted(times[(setup, p)][i] for p in ps)
                return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2

            best = min(("socket-auto", "socket-rd"), key=lambda s: median(s, range(1, passes + 1)))
            ratio = median(best, range(1, passes + 1)) / median("mpi-tcp", peer_passes)
            won = sum(1 for p in peer_passes if times[(best, p)][i] <= times[("mpi-tcp", p)][i])
            cells = rows[(4, latency_table.size_text(size))]
            # columns: socket auto, socket rd, OpenMPI TCP, best socket / MPI TCP, ucx, auto
            self.assertEqual(cells[3], f"{ratio:.2f} ({won}/{len(peer_passes)})", latency_table.size_text(size))
            self.assertEqual(cells[4:], ["-", "-"])


if __name__ == "__main__":
    unittest.main()
