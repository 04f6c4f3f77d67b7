"""SparkCCL's MLlib estimators from PySpark: thin wrappers over the JVM classes.

    from sparkccl.ml.classification import CclLogisticRegression
    model = CclLogisticRegression(regParam=0.01, numWorkers=4).fit(training)

They behave as pyspark's own estimators in ``Pipeline``, ``CrossValidator`` and persistence.
``PipelineModel.load`` names a stage's Python class after its JVM class
(``org.sparkccl.ml.classification.CclLogisticRegressionModel``), so importing this package
registers the wrapper modules under those names too.
"""

import sys
import types

from sparkccl.ml import classification, regression

__all__ = ["classification", "regression"]


def _alias(jvm_package, module):
    """Makes ``module`` importable as ``jvm_package``, creating empty parent packages."""
    parts = jvm_package.split(".")
    for i in range(1, len(parts)):
        name = ".".join(parts[:i])
        if name not in sys.modules:
            parent = types.ModuleType(name)
            parent.__path__ = []
            sys.modules[name] = parent
    sys.modules[jvm_package] = module


_alias("org.sparkccl.ml.classification", classification)
_alias("org.sparkccl.ml.regression", regression)
