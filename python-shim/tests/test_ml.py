"""The sparkccl.ml wrappers against a real local[2] Spark with the SparkCCL jars (built by Maven),
checked against pyspark's own LogisticRegression on the same data.

Run: python3 -m unittest discover -s python-shim/tests  (bin/run-tests does, after mvn verify).
"""

import glob
import os
import random
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = os.path.join(ROOT, "python-shim")
sys.path.insert(0, SHIM)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SHIM, os.environ.get("PYTHONPATH")) if p)

try:
    import numpy  # noqa: F401  (pyspark.ml needs it)

    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False


def _jars():
    lib = os.path.join(ROOT, "examples", "target", "lib")
    return sorted(glob.glob(os.path.join(lib, "*.jar")))


@unittest.skipUnless(HAVE_NUMPY, "SKIPPED: pyspark.ml needs numpy (pip install numpy)")
@unittest.skipUnless(glob.glob(os.path.join(ROOT, "examples", "target", "lib", "sparkccl-*.jar")),
                     "SKIPPED: build the jars first (mvn package): none in examples/target/lib")
class MlWrappersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from pyspark.ml.linalg import Vectors
        from pyspark.sql import SparkSession

        cls.spark = (
            SparkSession.builder.master("local[2]")
            .appName("sparkccl-ml-wrappers-test")
            .config("spark.jars", ",".join(_jars()))
            .config("spark.plugins", "org.sparkccl.spark.SparkCCLPlugin")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.ccl.timeout", "60s")
            .getOrCreate()
        )
        rnd = random.Random(3)
        weights = [rnd.gauss(0, 1) for _ in range(5)]
        rows = []
        for _ in range(2000):
            x = [rnd.gauss(0, 1) + j for j in range(5)]
            m = sum(w * (v - j) for j, (w, v) in enumerate(zip(weights, x)))
            p = 1 / (1 + pow(2.718281828459045, -m))
            rows.append((1.0 if rnd.random() < p else 0.0, m + rnd.gauss(0, 0.3), Vectors.dense(x)))
        cls.data = cls.spark.createDataFrame(rows, ["label", "y", "features"]).repartition(2).cache()
        cls.tmp = tempfile.mkdtemp()

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_logistic_regression_matches_pysparks(self):
        from pyspark.ml.classification import LogisticRegression
        from sparkccl.ml.classification import CclLogisticRegression

        want = LogisticRegression(regParam=0.01).fit(self.data)
        got = CclLogisticRegression(regParam=0.01, numWorkers=2).fit(self.data)
        diff = sum((a - b) ** 2 for a, b in zip(got.coefficients, want.coefficients)) ** 0.5
        norm = sum(b * b for b in want.coefficients) ** 0.5
        self.assertLessEqual(diff, 1e-4 * norm)
        self.assertAlmostEqual(want.intercept, got.intercept, delta=1e-4)
        self.assertAlmostEqual(want.summary.objectiveHistory[-1], got.objectiveHistory[-1],
                               delta=1e-6 * want.summary.objectiveHistory[-1])
        self.assertEqual(2, got.numClasses)
        scored = got.transform(self.data).select("probability", "prediction").first()
        self.assertAlmostEqual(1.0, sum(scored.probability), delta=1e-12)

    def test_models_and_a_pipeline_model_save_and_load_from_python(self):
        from pyspark.ml import Pipeline, PipelineModel
        from sparkccl.ml.classification import CclLogisticRegression, CclLogisticRegressionModel
        from sparkccl.ml.regression import CclLinearRegression, CclLinearRegressionModel

        model = CclLogisticRegression(regParam=0.02, threshold=0.4).fit(self.data)
        path = os.path.join(self.tmp, "lr")
        model.write().overwrite().save(path)
        loaded = CclLogisticRegressionModel.load(path)
        self.assertIsInstance(loaded, CclLogisticRegressionModel)
        self.assertEqual(list(model.coefficients), list(loaded.coefficients))
        self.assertEqual(0.4, loaded.getThreshold())

        estimator = CclLinearRegression(labelCol="y", regParam=0.1, numWorkers=2)
        estimator.save(os.path.join(self.tmp, "linreg"))
        again = CclLinearRegression.load(os.path.join(self.tmp, "linreg"))
        self.assertEqual(0.1, again.getRegParam())
        self.assertEqual(2, again.getNumWorkers())

        pipeline_model = Pipeline(stages=[again]).fit(self.data)
        ppath = os.path.join(self.tmp, "pipeline")
        pipeline_model.write().overwrite().save(ppath)
        reloaded = PipelineModel.load(ppath)
        self.assertIsInstance(reloaded.stages[0], CclLinearRegressionModel)
        self.assertEqual(list(pipeline_model.stages[0].coefficients),
                         list(reloaded.stages[0].coefficients))


if __name__ == "__main__":
    unittest.main()
