"""The plugin's task-slot check, from Python: fail at once where a barrier stage cannot start."""

from sparkccl.errors import java_call


def check_slots(sc, num_tasks: int) -> None:
    """Raises :class:`sparkccl.CclArgumentError`, saying how many task slots the application has
    and what to change, when ``num_tasks`` barrier tasks cannot all run at once under ``sc``'s
    master (every local master, YARN, Kubernetes, standalone with ``spark.cores.max``); returns
    where they can or where the master does not tell. Spark's own check would retry the stage
    every 15 s for minutes instead.

    >>> check_slots(spark.sparkContext, 4)   # doctest: +SKIP
    """
    java_call(sc._jvm.org.sparkccl.spark.TaskSlots.check, sc._jsc.sc(), int(num_tasks))
