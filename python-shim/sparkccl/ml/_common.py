"""Params and persistence shared by the SparkCCL wrappers."""

from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.util import JavaMLReader, JavaMLReadable


class HasCclParams(Params):
    """The params SparkCCL adds to MLlib's: how many barrier tasks train, and their timeout."""

    numWorkers = Param(
        Params._dummy(),
        "numWorkers",
        "barrier tasks that train together (>= 0); 0 means the application's task slots where "
        "the master tells them, else the input's partitions",
        typeConverter=TypeConverters.toInt,
    )
    collectiveTimeout = Param(
        Params._dummy(),
        "collectiveTimeout",
        "seconds a collective may wait without progress before the fit fails (>= 0); 0 means "
        "the executors' spark.ccl.timeout",
        typeConverter=TypeConverters.toFloat,
    )

    def getNumWorkers(self):
        return self.getOrDefault(self.numWorkers)

    def getCollectiveTimeout(self):
        return self.getOrDefault(self.collectiveTimeout)


class _CclReader(JavaMLReader):
    """Loads through the JVM class the wrapper names (not pyspark's package mapping)."""

    @classmethod
    def _java_loader_class(cls, clazz):
        return clazz._java_class_name


class CclReadable(JavaMLReadable):
    @classmethod
    def read(cls):
        return _CclReader(cls)


def setter(name):
    """A fluent setter for the param ``name``."""

    def set_value(self, value):
        return self._set(**{name: value})

    set_value.__name__ = "set" + name[0].upper() + name[1:]
    set_value.__doc__ = "Sets the value of :py:attr:`%s`." % name
    return set_value


def java_property(name, doc=None):
    """A read-only property that returns the JVM model's no-argument method ``name``."""
    return property(lambda self: self._call_java(name), doc=doc)


class LinearModelAccessors:
    """What both fitted models expose: coefficients, intercept, sizes and the fit's history."""

    coefficients = java_property("coefficients", "The coefficients (a DenseVector).")
    intercept = java_property("intercept")
    numFeatures = java_property("numFeatures")

    @property
    def objectiveHistory(self):
        """The objective before the first step and after each iteration (fitted models only)."""
        return list(self._java_obj.summary().objectiveHistory())

    @property
    def totalIterations(self):
        return self._java_obj.summary().totalIterations()
