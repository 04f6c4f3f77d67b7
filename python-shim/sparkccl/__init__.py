"""SparkCCL from PySpark: collectives on RDDs of float arrays.

Each element of the RDD is one array: a float32 or float64 numpy array, an ``array.array``
('f' or 'd'), or a list of floats (float64). Every partition must hold the same number of
arrays with the same lengths; the i-th arrays of all partitions form one collective. The
result is an RDD of arrays of the same kind (numpy arrays when numpy is installed and the
input was numpy, ``array.array`` for arrays, lists for lists).

    from pyspark.sql import SparkSession
    import sparkccl

    spark = (SparkSession.builder
             .config("spark.jars", sparkccl.jars_conf())      # the jars this package bundles
             .config("spark.plugins", sparkccl.PLUGIN)
             .getOrCreate())
    n = spark.sparkContext.defaultParallelism                 # one task slot per partition
    grads = spark.sparkContext.parallelize(arrays, n)
    summed = sparkccl.all_reduce(grads, op="sum").collect()

Each call runs its barrier stage at once, so a failure raises :class:`CclError` there (with the
engine's message, not a Java stack trace); the result RDD is persisted, and a barrier stage
still: use actions over every partition (``collect``, ``count``, ``foreach``), not ``first`` or
``take``.
"""

from array import array
from typing import Any

from pyspark.rdd import RDD
from pyspark.serializers import BatchedSerializer, CPickleSerializer

from sparkccl.errors import (
    CclAbortError,
    CclArgumentError,
    CclError,
    CclMismatchError,
    CclTimeoutError,
    java_call,
)
from sparkccl._bundle import PLUGIN, jars, jars_conf
from sparkccl.slots import check_slots

__all__ = ["all_reduce", "broadcast", "all_gather", "reduce_scatter"]
__all__ += ["CclError", "CclMismatchError", "CclTimeoutError", "CclAbortError", "CclArgumentError"]
__all__ += ["jars", "jars_conf", "PLUGIN", "check_slots"]

_OPS = ("sum", "prod", "min", "max", "avg")


def all_reduce(rdd: RDD[Any], op: str = "sum") -> RDD[Any]:
    """Every partition gets the element-wise reduction (sum, prod, min, max, avg)."""
    return _run(rdd, "allReduce", op, 0)


def broadcast(rdd: RDD[Any], root: int = 0) -> RDD[Any]:
    """Every partition gets a copy of partition ``root``'s arrays."""
    return _run(rdd, "broadcast", "sum", root)


def all_gather(rdd: RDD[Any]) -> RDD[Any]:
    """Every partition gets all partitions' arrays concatenated in partition order."""
    return _run(rdd, "allGather", "sum", 0)


def reduce_scatter(rdd: RDD[Any], op: str = "sum") -> RDD[Any]:
    """Partition p gets the reduction of block p of every partition's arrays."""
    return _run(rdd, "reduceScatter", op, 0)


def _run(rdd, collective, op, root):
    if not isinstance(rdd, RDD):
        raise TypeError("expected a pyspark RDD of arrays, got %s" % type(rdd).__name__)
    if op not in _OPS:
        raise CclArgumentError(
            "op=%r is not a reduction; expected one of %s" % (op, ", ".join(_OPS)))
    kinds = sorted(set(rdd.mapPartitions(_first_kind).collect()))
    if not kinds:
        raise CclArgumentError("the RDD holds no arrays")
    for kind in kinds:
        if kind.startswith("unsupported"):
            raise CclArgumentError(kind)
    dtypes = {k.split(":")[0] for k in kinds}
    if len(dtypes) > 1:
        raise CclArgumentError("partitions hold arrays of different types: %s" % ", ".join(kinds))
    dtype = dtypes.pop()
    out_kind = _out_kind(k.split(":")[1] for k in kinds)
    typecode = "f" if dtype == "float32" else "d"
    sc = rdd.ctx
    jvm = sc._jvm
    java_in = rdd.map(lambda a: _to_bytes(a, typecode))._to_java_object_rdd()
    java_out = java_call(
        jvm.org.sparkccl.spark.PythonBridge.run, java_in, collective, dtype, op, int(root)
    )
    # Run the stage now, so that its failure raises here as a CclError; the actions the caller
    # runs next read the persisted result instead of running the collective again.
    java_out.persist(jvm.org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK())
    try:
        java_call(java_out.count)
    except BaseException:
        java_out.unpersist(False)
        raise
    pickled = jvm.org.apache.spark.api.python.SerDeUtil.javaToPython(java_out)
    raw = RDD(pickled, sc, BatchedSerializer(CPickleSerializer()))
    return raw.map(lambda b: _from_bytes(b, typecode, out_kind))


def _out_kind(kinds):
    """The results' kind: numpy where any input was numpy, else array where any was, else list."""
    kinds = set(kinds)
    for kind in ("numpy", "array"):
        if kind in kinds:
            return kind
    return "list"


def _first_kind(items):
    """'float32:array', 'float64:numpy', ... for a partition's first element, or why not."""
    for a in items:
        return [_kind(a)]
    return []


def _kind(a):
    if isinstance(a, array):
        if a.typecode in ("f", "d"):
            return ("float32" if a.typecode == "f" else "float64") + ":array"
        return "unsupported: array('%s'); expected array('f') or array('d')" % a.typecode
    dt = getattr(a, "dtype", None)
    if dt is not None:
        if str(dt) in ("float32", "float64"):
            return str(dt) + ":numpy"
        return "unsupported: numpy arrays of %s; expected float32 or float64" % dt
    if isinstance(a, (list, tuple)):
        return "float64:list"
    return ("unsupported: an element of type %s; expected a numpy array, array.array or a list"
            " of floats" % type(a).__name__)


def _to_bytes(a, typecode):
    if hasattr(a, "dtype"):
        return bytes(a.astype("float32" if typecode == "f" else "float64").tobytes())
    if not (isinstance(a, array) and a.typecode == typecode):
        a = array(typecode, a)
    return a.tobytes()


def _from_bytes(b, typecode, kind):
    if kind == "numpy":
        import numpy as np

        return np.frombuffer(bytes(b), dtype=np.float32 if typecode == "f" else np.float64).copy()
    out = array(typecode)
    out.frombytes(bytes(b))
    return out.tolist() if kind == "list" else out
