"""SparkCCL from PySpark: collectives inside barrier tasks, and on RDDs of arrays.

Inside a barrier task (``rdd.barrier().mapPartitions(fn)`` or ``df.mapInPandas(fn,
barrier=True)``), ``sparkccl.communicator()`` joins the stage's communicator on the executor's
engine; ``sparkccl.run(fn, n)`` runs ``fn(comm)`` on n tasks. On RDDs, ``all_reduce(rdd)`` and
friends run one barrier stage each, at once; every element is one array (numpy,
``array.array`` or a list), every partition holds the same arrays, and results come back in the
input's kind.

    from pyspark.sql import SparkSession
    import sparkccl

    spark = (SparkSession.builder
             .config("spark.jars", sparkccl.jars_conf())      # the jars this package bundles
             .config("spark.plugins", sparkccl.PLUGIN)
             .getOrCreate())
    n = spark.sparkContext.defaultParallelism                 # one task slot per partition
    grads = spark.sparkContext.parallelize(arrays, n)
    summed = sparkccl.all_reduce(grads, op="sum").collect()

A failure raises :class:`CclError` at the call (with the engine's message, not a Java stack
trace). The result RDD is persisted, and a barrier stage still: use actions over every partition
(``collect``, ``count``, ``foreach``), not ``first`` or ``take``.
"""

from ._bundle import PLUGIN, jars, jars_conf
from .buffers import asarray, empty, is_shared, zeros
from .comm import Communicator, communicator
from .errors import (CclAbortError, CclArgumentError, CclError, CclMismatchError,
                     CclTimeoutError, ccl_errors)
from .launch import run
from .rdd import all_gather, all_reduce, broadcast, reduce_scatter
from .slots import check_slots

__all__ = ["all_reduce", "broadcast", "all_gather", "reduce_scatter",
           "communicator", "Communicator", "run", "empty", "zeros", "asarray", "is_shared",
           "jars", "jars_conf", "PLUGIN", "check_slots",
           "CclError", "CclMismatchError", "CclTimeoutError", "CclAbortError", "CclArgumentError",
           "ccl_errors"]
