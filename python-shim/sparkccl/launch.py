"""``sparkccl.run``: a function on N barrier tasks, each with its communicator."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .comm import communicator
from .errors import CclArgumentError, CclError, from_job_failure

__all__ = ["run", "check_slots"]


def check_slots(sc, num_workers: int) -> None:
    """Fails at once, saying what to change, where ``num_workers`` barrier tasks cannot all run."""
    conf = sc.getConf()
    if conf.get("spark.dynamicAllocation.enabled", "false").strip().lower() == "true":
        raise CclArgumentError("SparkCCL needs barrier mode, which does not work with dynamic"
                               " allocation: set spark.dynamicAllocation.enabled=false")
    try:
        sc._jvm.org.sparkccl.spark.SparkCCL.checkSlots(sc._jsc.sc().getConf(), int(num_workers))
    except TypeError:  # py4j's JavaPackage: the class is not on the driver's classpath
        raise CclError("the SparkCCL jars are not on the driver's classpath: start Spark with"
                       " --jars (or spark.jars) naming them and"
                       " spark.plugins=org.sparkccl.spark.SparkCCLPlugin") from None
    except Exception as e:  # the check's own message, as py4j or pyspark's conversion gives it
        java = getattr(e, "java_exception", None)
        if java is not None:
            message = str(java.getMessage())
        elif type(e).__module__.startswith("pyspark.errors"):
            message = str(e).splitlines()[0]
        else:
            raise
        raise CclArgumentError(message) from None


def run(fn: Callable[..., Any], num_workers: int, *args: Any,
        timeout: Optional[float] = None) -> Any:
    """Runs ``fn(comm, *args)`` on ``num_workers`` barrier tasks; returns rank 0's result.

    >>> def step(comm, n):                               # doctest: +SKIP
    ...     x = sparkccl.zeros(n, "float64"); x[:] = comm.rank
    ...     return comm.all_reduce(x).sum()
    >>> sparkccl.run(step, 4, 1000)                      # doctest: +SKIP
    6000.0

    The tasks form one barrier stage of the active SparkContext, ending in a shuffle so that a
    failed attempt (a task died, a collective failed) is retried as Spark retries stages. A
    failure raises the task's ``CclError`` here, its message on the first line. ``timeout``
    (seconds) replaces ``spark.ccl.timeout`` for the communicator.
    """
    from pyspark import SparkContext

    if not isinstance(num_workers, int) or num_workers < 1:
        raise CclArgumentError("num_workers=%r; expected a positive int" % (num_workers,))
    sc = SparkContext._active_spark_context
    if sc is None:
        raise CclError("no active SparkContext: create a SparkSession first")
    check_slots(sc, num_workers)

    def task(_):
        with communicator(timeout) as comm:
            result = fn(comm, *args)
            rank = comm.rank
        return [result] if rank == 0 else []

    stage = sc.parallelize(range(num_workers), num_workers).barrier().mapPartitions(task)
    try:
        results = stage.repartition(1).collect()
    except Exception as e:
        ccl = from_job_failure(e)
        if ccl is None:
            raise
        ccl.job_error = e  # the whole Spark failure, for whoever wants the stack traces
        raise ccl from None
    return results[0]

