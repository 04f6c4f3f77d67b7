"""``CclLinearRegression``: MLlib's LinearRegression (l-bfgs) trained in one barrier stage.

    from sparkccl.ml.regression import CclLinearRegression
    model = CclLinearRegression(regParam=0.1, elasticNetParam=0.5).fit(training)
"""

from pyspark import keyword_only
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasAggregationDepth,
    HasElasticNetParam,
    HasFeaturesCol,
    HasFitIntercept,
    HasLabelCol,
    HasLoss,
    HasMaxBlockSizeInMB,
    HasMaxIter,
    HasPredictionCol,
    HasRegParam,
    HasSolver,
    HasStandardization,
    HasTol,
    HasWeightCol,
)
from pyspark.ml.util import JavaMLWritable
from pyspark.ml.wrapper import JavaEstimator, JavaModel

from sparkccl.ml._common import CclReadable, HasCclParams, LinearModelAccessors, setter

__all__ = ["CclLinearRegression", "CclLinearRegressionModel"]


class CclLinearRegression(
    JavaEstimator,
    HasFeaturesCol,
    HasLabelCol,
    HasPredictionCol,
    HasWeightCol,
    HasMaxIter,
    HasTol,
    HasRegParam,
    HasElasticNetParam,
    HasFitIntercept,
    HasStandardization,
    HasSolver,
    HasLoss,
    HasMaxBlockSizeInMB,
    HasAggregationDepth,
    HasCclParams,
    JavaMLWritable,
    CclReadable,
):
    """MLlib's LinearRegression with solver l-bfgs and the squared error loss, with the same params
    and defaults; other solvers and losses fail, naming MLlib's estimator."""

    _java_class_name = "org.sparkccl.ml.regression.CclLinearRegression"

    epsilon = Param(
        Params._dummy(),
        "epsilon",
        "The shape parameter to control the amount of robustness. Must be > 1.0; used by the "
        "huber loss only",
        typeConverter=TypeConverters.toFloat,
    )

    @keyword_only
    def __init__(
        self,
        *,
        featuresCol="features",
        labelCol="label",
        predictionCol="prediction",
        maxIter=100,
        regParam=0.0,
        elasticNetParam=0.0,
        tol=1e-6,
        fitIntercept=True,
        standardization=True,
        solver="auto",
        weightCol=None,
        aggregationDepth=2,
        loss="squaredError",
        epsilon=1.35,
        maxBlockSizeInMB=0.0,
        numWorkers=0,
        collectiveTimeout=0.0,
    ):
        super().__init__()
        self._java_obj = self._new_java_obj(self._java_class_name, self.uid)
        self._setDefault(
            maxIter=100,
            regParam=0.0,
            elasticNetParam=0.0,
            tol=1e-6,
            fitIntercept=True,
            standardization=True,
            solver="auto",
            aggregationDepth=2,
            loss="squaredError",
            epsilon=1.35,
            maxBlockSizeInMB=0.0,
            numWorkers=0,
            collectiveTimeout=0.0,
        )
        self.setParams(**self._input_kwargs)

    @keyword_only
    def setParams(self, **kwargs):
        """Sets params by name, as the constructor does."""
        return self._set(**kwargs)

    def getEpsilon(self):
        return self.getOrDefault(self.epsilon)

    setFeaturesCol = setter("featuresCol")
    setLabelCol = setter("labelCol")
    setPredictionCol = setter("predictionCol")
    setWeightCol = setter("weightCol")
    setMaxIter = setter("maxIter")
    setTol = setter("tol")
    setRegParam = setter("regParam")
    setElasticNetParam = setter("elasticNetParam")
    setFitIntercept = setter("fitIntercept")
    setStandardization = setter("standardization")
    setSolver = setter("solver")
    setLoss = setter("loss")
    setEpsilon = setter("epsilon")
    setMaxBlockSizeInMB = setter("maxBlockSizeInMB")
    setAggregationDepth = setter("aggregationDepth")
    setNumWorkers = setter("numWorkers")
    setCollectiveTimeout = setter("collectiveTimeout")

    def _create_model(self, java_model):
        return CclLinearRegressionModel(java_model)


class CclLinearRegressionModel(
    LinearModelAccessors, JavaModel, HasFeaturesCol, HasPredictionCol, JavaMLWritable, CclReadable
):
    """The fitted model: ``prediction = coefficients . features + intercept``."""

    _java_class_name = "org.sparkccl.ml.regression.CclLinearRegressionModel"

    setFeaturesCol = setter("featuresCol")
    setPredictionCol = setter("predictionCol")

