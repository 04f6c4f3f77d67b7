"""The PySpark shim against a real local[4] Spark with the SparkCCL jars (built by Maven).

Run: python3 -m unittest discover -s python-shim/tests  (bin/run-tests does, after mvn verify).
"""

import glob
import os
import random
import sys
import unittest
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = os.path.join(ROOT, "python-shim")
sys.path.insert(0, SHIM)
# Spark's Python workers import the shim too; in local mode they inherit this environment.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SHIM, os.environ.get("PYTHONPATH")) if p)

import sparkccl  # noqa: E402

PARTITIONS = 4


def _jars():
    lib = os.path.join(ROOT, "examples", "target", "lib")
    return sorted(glob.glob(os.path.join(lib, "*.jar")))  # what Spark does not bring itself


@unittest.skipUnless(glob.glob(os.path.join(ROOT, "examples", "target", "lib", "sparkccl-*.jar")),
                     "SKIPPED: build the jars first (mvn package): none in examples/target/lib")
class ShimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pyspark.sql import SparkSession

        cls.spark = (
            SparkSession.builder.master("local[%d]" % PARTITIONS)
            .appName("sparkccl-python-shim-test")
            .config("spark.jars", ",".join(_jars()))
            .config("spark.plugins", "org.sparkccl.spark.SparkCCLPlugin")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.ccl.timeout", "30s")
            .getOrCreate()
        )
        cls.sc = cls.spark.sparkContext

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()

    def _random_arrays(self, n, typecode, seed):
        rnd = random.Random(seed)
        return [array(typecode, (rnd.uniform(0.5, 1.5) for _ in range(n))) for _ in range(PARTITIONS)]

    def test_all_reduce_sums_float32_and_float64_arrays(self):
        for typecode, tol in (("f", 1e-5), ("d", 1e-12)):
            inputs = self._random_arrays(1001, typecode, 7)
            out = sparkccl.all_reduce(self.sc.parallelize(inputs, PARTITIONS)).collect()
            self.assertEqual(PARTITIONS, len(out))
            for got in out:
                self.assertEqual(typecode, got.typecode)
                for i in range(len(got)):
                    ref = sum(a[i] for a in inputs)
                    self.assertAlmostEqual(ref, got[i], delta=tol * ref)

    def test_max_broadcast_all_gather_and_reduce_scatter(self):
        inputs = self._random_arrays(400, "d", 11)
        rdd = self.sc.parallelize(inputs, PARTITIONS)
        maxes = sparkccl.all_reduce(rdd, op="max").collect()
        self.assertEqual([max(a[i] for a in inputs) for i in range(400)], list(maxes[2]))
        self.assertEqual([list(inputs[3])] * PARTITIONS,
                         [list(a) for a in sparkccl.broadcast(rdd, root=3).collect()])
        gathered = sparkccl.all_gather(rdd).collect()
        self.assertEqual(sum((list(a) for a in inputs), []), list(gathered[1]))
        scattered = sparkccl.reduce_scatter(rdd).collect()
        for p, block in enumerate(scattered):
            ref = [sum(a[p * 100 + i] for a in inputs) for i in range(100)]
            for r, g in zip(ref, block):
                self.assertAlmostEqual(r, g, delta=1e-12 * r)

    def test_bad_input_fails_with_a_clear_message(self):
        with self.assertRaisesRegex(ValueError, "op='mean' is not a reduction"):
            sparkccl.all_reduce(self.sc.parallelize(self._random_arrays(3, "f", 1), PARTITIONS), op="mean")
        with self.assertRaisesRegex(Exception, r"array\('h'\) is not supported"):
            sparkccl.all_reduce(self.sc.parallelize([array("h", [1])] * PARTITIONS, PARTITIONS)).collect()
        uneven = self._random_arrays(10, "f", 2)
        uneven[2] = array("f", [1.0, 2.0])
        with self.assertRaisesRegex(Exception, r"CclMismatchError: partitions \[2\] hold other arrays"):
            sparkccl.all_reduce(self.sc.parallelize(uneven, PARTITIONS)).collect()

    def test_results_keep_the_input_kind_shape_and_dtype(self):
        import numpy as np

        rng = np.random.default_rng(5)
        mats = [rng.integers(1, 100, size=(4, 3)).astype(np.int32) for _ in range(PARTITIONS)]
        out = sparkccl.all_reduce(self.sc.parallelize(mats, PARTITIONS)).collect()
        for got in out:
            self.assertEqual((np.int32, (4, 3)), (got.dtype, got.shape))
            np.testing.assert_array_equal(sum(mats), got)
        lists = [[float(v) for v in rng.uniform(0.5, 1.5, 8)] for _ in range(PARTITIONS)]
        got = sparkccl.all_gather(self.sc.parallelize(lists, PARTITIONS)).collect()
        self.assertIsInstance(got[0], list)
        self.assertEqual(sum(lists, []), got[3])


if __name__ == "__main__":
    unittest.main()
