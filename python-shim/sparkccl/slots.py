"""The plugin's task-slot check, from Python: fail at once where a barrier stage cannot start."""

from __future__ import annotations

from .errors import CclError, java_call

__all__ = ["check_slots"]


def check_slots(sc, num_tasks: int) -> None:
    """Raises :class:`sparkccl.CclArgumentError`, saying how many task slots the application has
    and what to change, when ``num_tasks`` barrier tasks cannot all run at once under ``sc``'s
    master (every local master, YARN, Kubernetes, standalone with ``spark.cores.max``) or when
    dynamic allocation is on; returns where they can or where the master does not tell. Spark's
    own check would retry the stage every 15 s for minutes instead.

    >>> check_slots(spark.sparkContext, 4)   # doctest: +SKIP
    """
    check = sc._jvm.org.sparkccl.spark.TaskSlots.check
    try:
        java_call(check, sc._jsc.sc(), int(num_tasks))
    except TypeError:  # py4j's JavaPackage: the class is not on the driver's classpath
        raise CclError("the SparkCCL jars are not on the driver's classpath: start Spark with"
                       " --jars (or spark.jars) naming sparkccl.jars() and"
                       " spark.plugins=org.sparkccl.spark.SparkCCLPlugin") from None
