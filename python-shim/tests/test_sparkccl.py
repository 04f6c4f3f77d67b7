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
BUNDLED = glob.glob(os.path.join(SHIM, "sparkccl", "jars", "sparkccl-spark-plugin-*.jar"))


@unittest.skipUnless(BUNDLED, "SKIPPED: build the jars first (mvn package copies them into"
                              " python-shim/sparkccl/jars): none there")
class ShimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pyspark.sql import SparkSession

        cls.spark = (
            SparkSession.builder.master("local[%d]" % PARTITIONS)
            .appName("sparkccl-python-shim-test")
            .config("spark.jars", sparkccl.jars_conf())
            .config("spark.plugins", sparkccl.PLUGIN)
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
        with self.assertRaisesRegex(sparkccl.CclArgumentError, "op='mean' is not a reduction"):
            sparkccl.all_reduce(self.sc.parallelize(self._random_arrays(3, "f", 1), PARTITIONS),
                                op="mean")
        # found in the tasks, raised at the call as the tasks' error
        with self.assertRaisesRegex(sparkccl.CclArgumentError, r"array\('h'\) is not supported"):
            sparkccl.all_reduce(self.sc.parallelize([array("h", [1])] * PARTITIONS, PARTITIONS))
        with self.assertRaisesRegex(sparkccl.CclArgumentError, "root=4 is not a partition"):
            sparkccl.broadcast(self.sc.parallelize(self._random_arrays(3, "f", 1), PARTITIONS), 4)
        with self.assertRaisesRegex(sparkccl.CclArgumentError, "expected a pyspark RDD"):
            sparkccl.all_gather([array("f", [1.0])])

    def test_lists_come_back_as_lists_and_numpy_as_numpy(self):
        rnd = random.Random(5)
        lists = [[rnd.uniform(-1, 1) for _ in range(33)] for _ in range(PARTITIONS)]
        out = sparkccl.all_reduce(self.sc.parallelize(lists, PARTITIONS), op="min").collect()
        self.assertEqual([[min(c) for c in zip(*lists)]] * PARTITIONS, out)
        self.assertTrue(all(type(o) is list for o in out), [type(o) for o in out])
        import numpy as np

        arrays = [np.array(a, dtype=np.float32) for a in lists]
        got = sparkccl.all_gather(self.sc.parallelize(arrays, PARTITIONS)).collect()
        self.assertEqual(np.float32, got[0].dtype)
        np.testing.assert_array_equal(np.concatenate(arrays), got[3])

    def test_a_mismatch_raises_a_short_ccl_error_in_elements(self):
        uneven = self._random_arrays(10, "f", 2)
        uneven[2] = array("f", [1.0, 2.0])
        with self.assertRaises(sparkccl.CclMismatchError) as caught:
            sparkccl.all_reduce(self.sc.parallelize(uneven, PARTITIONS))
        message = str(caught.exception)
        self.assertRegex(message, r"^CclMismatchError in a barrier task: the partitions disagree")
        self.assertIn("partition(s) [2] hold 1 array(s): float32[2] (8 bytes)", message)
        self.assertIn("partition(s) [0, 1, 3] hold 1 array(s): float32[10] (40 bytes)", message)
        self.assertNotIn("Py4J", message)
        self.assertNotIn("\tat ", message)
        self.assertLess(len(message), 400, message)
        self.assertIsNone(caught.exception.__cause__)
        self.assertTrue(caught.exception.__suppress_context__)

    def test_more_partitions_than_slots_fail_at_once_naming_both(self):
        too_many = PARTITIONS + 1
        rdd = self.sc.parallelize(self._random_arrays(8, "d", 3) + [array("d", [0.0] * 8)],
                                  too_many)
        with self.assertRaisesRegex(sparkccl.CclArgumentError,
                                    r"needs 5 task slots at once but master local\[4\] offers 4"):
            sparkccl.broadcast(rdd)
        with self.assertRaisesRegex(sparkccl.CclArgumentError, r"e\.g\. local\[5\]"):
            sparkccl.check_slots(self.sc, too_many)
        sparkccl.check_slots(self.sc, PARTITIONS)

    def test_the_jars_are_found_from_any_working_directory(self):
        here = os.getcwd()
        try:
            os.chdir(os.path.sep)
            found = sparkccl.jars()
        finally:
            os.chdir(here)
        names = [os.path.basename(j) for j in found]
        self.assertTrue(all(os.path.isabs(j) and os.path.isfile(j) for j in found), found)
        for prefix in ("sparkccl-spark-plugin-", "sparkccl-native-engine-", "jucx-"):
            self.assertTrue(any(n.startswith(prefix) for n in names), names)
        self.assertFalse(any(n.startswith(("log4j-", "spark-", "picocli")) for n in names), names)
        self.assertEqual(",".join(found), sparkccl.jars_conf())

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
