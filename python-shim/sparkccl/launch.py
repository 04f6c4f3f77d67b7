"""``sparkccl.run``: a function on N barrier tasks, each with its communicator."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .comm import communicator
from .errors import CclArgumentError, CclError, job_call
from .slots import check_slots

__all__ = ["run"]


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
    return job_call(stage.repartition(1).collect)[0]
