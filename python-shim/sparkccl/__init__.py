"""SparkCCL from PySpark: collectives on RDDs of float arrays.

Each element of the RDD is one array: a float32 or float64 numpy array, an ``array.array``
('f' or 'd'), or a list of floats (float64). Every partition must hold the same number of
arrays with the same lengths; the i-th arrays of all partitions form one collective. The
result is an RDD of arrays of the same kind (numpy arrays when numpy is installed and the
input was numpy, else ``array.array``).

    from pyspark.sql import SparkSession
    import sparkccl

    spark = (SparkSession.builder
             .config("spark.jars", "<the SparkCCL jars>")
             .config("spark.plugins", "org.sparkccl.spark.SparkCCLPlugin")
             .getOrCreate())
    grads = spark.sparkContext.parallelize(arrays, 4)
    summed = sparkccl.all_reduce(grads, op="sum").collect()

Each collective runs as one Spark barrier stage: use actions over every partition
(``collect``, ``count``, ``foreach``), not ``first`` or ``take``.
"""

from array import array

from pyspark.rdd import RDD
from pyspark.serializers import BatchedSerializer, CPickleSerializer

from .buffers import asarray, empty, is_shared, zeros
from .comm import Communicator, communicator
from .errors import (CclAbortError, CclArgumentError, CclError, CclMismatchError,
                     CclTimeoutError)

__all__ = ["all_reduce", "broadcast", "all_gather", "reduce_scatter",
           "communicator", "Communicator", "empty", "zeros", "asarray", "is_shared",
           "CclError", "CclMismatchError", "CclTimeoutError", "CclAbortError", "CclArgumentError"]

_OPS = ("sum", "prod", "min", "max", "avg")


def all_reduce(rdd, op="sum"):
    """Every partition gets the element-wise reduction (sum, prod, min, max, avg)."""
    return _run(rdd, "allReduce", op, 0)


def broadcast(rdd, root=0):
    """Every partition gets a copy of partition ``root``'s arrays."""
    return _run(rdd, "broadcast", "sum", root)


def all_gather(rdd):
    """Every partition gets all partitions' arrays concatenated in partition order."""
    return _run(rdd, "allGather", "sum", 0)


def reduce_scatter(rdd, op="sum"):
    """Partition p gets the reduction of block p of every partition's arrays."""
    return _run(rdd, "reduceScatter", op, 0)


def _run(rdd, collective, op, root):
    if not isinstance(rdd, RDD):
        raise TypeError("expected a pyspark RDD of arrays, got %s" % type(rdd).__name__)
    if op not in _OPS:
        raise ValueError("op=%r is not a reduction; expected one of %s" % (op, ", ".join(_OPS)))
    kinds = sorted(set(rdd.mapPartitions(_first_kind).collect()))
    if not kinds:
        raise ValueError("the RDD holds no arrays")
    for kind in kinds:
        if kind.startswith("unsupported"):
            raise ValueError(kind)
    dtypes = {k.split(":")[0] for k in kinds}
    if len(dtypes) > 1:
        raise ValueError("partitions hold arrays of different types: %s" % ", ".join(kinds))
    dtype = dtypes.pop()
    as_numpy = any(k.endswith(":numpy") for k in kinds)
    typecode = "f" if dtype == "float32" else "d"
    sc = rdd.ctx
    jvm = sc._jvm
    java_in = rdd.map(lambda a: _to_bytes(a, typecode))._to_java_object_rdd()
    java_out = jvm.org.sparkccl.spark.PythonBridge.run(java_in, collective, dtype, op, int(root))
    pickled = jvm.org.apache.spark.api.python.SerDeUtil.javaToPython(java_out)
    raw = RDD(pickled, sc, BatchedSerializer(CPickleSerializer()))
    return raw.map(lambda b: _from_bytes(b, typecode, as_numpy))


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


def _from_bytes(b, typecode, as_numpy):
    if as_numpy:
        import numpy as np

        return np.frombuffer(bytes(b), dtype=np.float32 if typecode == "f" else np.float64).copy()
    out = array(typecode)
    out.frombytes(bytes(b))
    return out
