"""``CclLogisticRegression``: MLlib's LogisticRegression trained in one barrier stage.

    from sparkccl.ml.classification import CclLogisticRegression
    lr = CclLogisticRegression(regParam=0.01, elasticNetParam=0.5)
    model = lr.fit(training)
    model.write().overwrite().save("/models/lr")
"""

from pyspark import keyword_only
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasAggregationDepth,
    HasElasticNetParam,
    HasFeaturesCol,
    HasFitIntercept,
    HasLabelCol,
    HasMaxBlockSizeInMB,
    HasMaxIter,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
    HasRegParam,
    HasStandardization,
    HasThreshold,
    HasThresholds,
    HasTol,
    HasWeightCol,
)
from pyspark.ml.util import JavaMLWritable
from pyspark.ml.wrapper import JavaEstimator, JavaModel

from sparkccl.ml._common import (
    CclReadable,
    HasCclParams,
    LinearModelAccessors,
    java_property,
    setter,
)

__all__ = ["CclLogisticRegression", "CclLogisticRegressionModel"]


class _PredictionParams(
    HasFeaturesCol,
    HasPredictionCol,
    HasRawPredictionCol,
    HasProbabilityCol,
    HasThreshold,
    HasThresholds,
):
    """What a fitted model uses to score."""


class CclLogisticRegression(
    JavaEstimator,
    _PredictionParams,
    HasLabelCol,
    HasWeightCol,
    HasMaxIter,
    HasTol,
    HasRegParam,
    HasElasticNetParam,
    HasFitIntercept,
    HasStandardization,
    HasMaxBlockSizeInMB,
    HasAggregationDepth,
    HasCclParams,
    JavaMLWritable,
    CclReadable,
):
    """MLlib's LogisticRegression (binomial and multinomial, L2 and elastic net) with the same
    params and defaults, trained with one SparkCCL all-reduce per loss evaluation."""

    _java_class_name = "org.sparkccl.ml.classification.CclLogisticRegression"

    family = Param(
        Params._dummy(),
        "family",
        "The name of family which is a description of the label distribution to be used in the "
        "model. Supported options: auto, binomial, multinomial.",
        typeConverter=TypeConverters.toString,
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
        threshold=0.5,
        thresholds=None,
        probabilityCol="probability",
        rawPredictionCol="rawPrediction",
        standardization=True,
        weightCol=None,
        aggregationDepth=2,
        family="auto",
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
            threshold=0.5,
            standardization=True,
            aggregationDepth=2,
            family="auto",
            maxBlockSizeInMB=0.0,
            numWorkers=0,
            collectiveTimeout=0.0,
        )
        self.setParams(**self._input_kwargs)

    @keyword_only
    def setParams(self, **kwargs):
        """Sets params by name, as the constructor does."""
        return self._set(**kwargs)

    def getFamily(self):
        return self.getOrDefault(self.family)

    setFeaturesCol = setter("featuresCol")
    setLabelCol = setter("labelCol")
    setPredictionCol = setter("predictionCol")
    setProbabilityCol = setter("probabilityCol")
    setRawPredictionCol = setter("rawPredictionCol")
    setWeightCol = setter("weightCol")
    setMaxIter = setter("maxIter")
    setTol = setter("tol")
    setRegParam = setter("regParam")
    setElasticNetParam = setter("elasticNetParam")
    setFitIntercept = setter("fitIntercept")
    setStandardization = setter("standardization")
    setThreshold = setter("threshold")
    setThresholds = setter("thresholds")
    setFamily = setter("family")
    setMaxBlockSizeInMB = setter("maxBlockSizeInMB")
    setAggregationDepth = setter("aggregationDepth")
    setNumWorkers = setter("numWorkers")
    setCollectiveTimeout = setter("collectiveTimeout")

    def _create_model(self, java_model):
        return CclLogisticRegressionModel(java_model)


class CclLogisticRegressionModel(
    LinearModelAccessors, JavaModel, _PredictionParams, JavaMLWritable, CclReadable
):
    """The fitted model: MLlib's output columns and accessors."""

    _java_class_name = "org.sparkccl.ml.classification.CclLogisticRegressionModel"

    setFeaturesCol = setter("featuresCol")
    setPredictionCol = setter("predictionCol")
    setProbabilityCol = setter("probabilityCol")
    setRawPredictionCol = setter("rawPredictionCol")
    setThreshold = setter("threshold")
    setThresholds = setter("thresholds")

    coefficientMatrix = java_property("coefficientMatrix")
    interceptVector = java_property("interceptVector")
    numClasses = java_property("numClasses")
