"""Collectives on RDDs of arrays, each partition one rank, on the in-task path.

Each element is one array: a numpy array (any engine dtype and shape), an ``array.array`` or a
list of numbers (float64). Every partition holds the same number of arrays with the same shapes
and dtypes; the i-th arrays of all partitions form one collective. Results come back in the
input's kind: numpy arrays (same dtype and shape), ``array.array`` (same typecode), lists.

Each call runs its barrier stage at once and returns the persisted result RDD, so that a failure
raises here as a short :class:`~sparkccl.CclError` (the task's error on the first line, no Py4J
stack trace) and the actions that follow read the result instead of running the stage again.
"""

from __future__ import annotations

import hashlib
from array import array
from typing import Any, Callable

import numpy as np

from .buffers import asarray
from .comm import OPS, communicator
from .errors import CclArgumentError, CclMismatchError, job_call
from .slots import check_slots

__all__ = ["all_reduce", "broadcast", "all_gather", "reduce_scatter"]

_TYPECODES = {"f": "float32", "d": "float64", "b": "int8", "B": "uint8"}


def all_reduce(rdd, op: str = "sum"):
    """Every partition gets the element-wise reduction (sum, prod, min, max, avg)."""
    _check_op(op)
    return _stage(rdd, lambda comm, a: comm.all_reduce(a, op))


def broadcast(rdd, root: int = 0):
    """Every partition gets a copy of partition ``root``'s arrays."""
    n = _partitions(rdd)
    if not isinstance(root, int) or not 0 <= root < n:
        raise CclArgumentError("root=%r is not a partition; expected 0..%d" % (root, n - 1))
    return _stage(rdd, lambda comm, a: comm.broadcast(a, root))


def all_gather(rdd):
    """Every partition gets all partitions' arrays concatenated (along axis 0) in order."""
    def gather(comm, a):
        shape = (comm.size * a.shape[0],) + a.shape[1:] if a.ndim else (comm.size,)
        return comm.all_gather(a, np.empty(shape, a.dtype))
    return _stage(rdd, gather)


def reduce_scatter(rdd, op: str = "sum"):
    """Partition p gets the reduction of block p (of ``size`` equal blocks) of every array."""
    _check_op(op)

    def scatter(comm, a):
        if a.ndim and a.shape[0] % comm.size == 0:
            shape = (a.shape[0] // comm.size,) + a.shape[1:]
        else:
            shape = (a.size // comm.size,)
        return comm.reduce_scatter(a, np.empty(shape, a.dtype), op)
    return _stage(rdd, scatter)


def _check_op(op: str) -> None:
    if op not in OPS:
        raise CclArgumentError("op=%r is not a reduction; expected one of %s" % (op, ", ".join(OPS)))


def _partitions(rdd) -> int:
    from pyspark.rdd import RDD

    if not isinstance(rdd, RDD):
        raise CclArgumentError("expected a pyspark RDD of arrays, got %s" % type(rdd).__name__)
    return rdd.getNumPartitions()


def _stage(rdd, collective: Callable[[Any, np.ndarray], np.ndarray]):
    n = _partitions(rdd)  # first: it says so when rdd is not an RDD
    check_slots(rdd.ctx, n)

    def run_partition(items):
        pairs = [_to_numpy(a) for a in items]
        with communicator() as comm:
            _check_agree(comm, [a for a, _ in pairs])
            results = [back(collective(comm, a)) for a, back in pairs]
        return results

    from pyspark import StorageLevel

    out = rdd.barrier().mapPartitions(run_partition).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        job_call(out.count)
    except BaseException:
        out.unpersist()
        raise
    return out


def _to_numpy(a):
    """A shared copy of ``a`` and the function that turns a result back into ``a``'s kind."""
    if isinstance(a, np.ndarray):
        return asarray(a), lambda r: np.array(r)
    if isinstance(a, array):
        name = _TYPECODES.get(a.typecode)
        if name is None and a.typecode in "iIlLqQ" and a.itemsize in (4, 8):
            name = ("int" if a.typecode.islower() else "uint") + str(8 * a.itemsize)
        if name is None:
            raise CclArgumentError("array('%s') is not supported; expected a typecode of f, d, b,"
                                   " B, i, I, l, L, q or Q" % a.typecode)
        code = a.typecode
        return asarray(np.frombuffer(a, dtype=name)), lambda r: array(code, r.tobytes())
    if isinstance(a, (list, tuple)):
        return asarray(np.asarray(a, dtype=np.float64)), lambda r: r.tolist()
    raise CclArgumentError("an element of type %s; expected a numpy array, array.array or a list"
                           " of numbers" % type(a).__name__)


def _describe(arrays) -> str:
    """``2 array(s): float32[10] (40 bytes), int32[4, 3] (48 bytes)``, at most 8 named."""
    named = ", ".join("%s%s (%d bytes)" % (a.dtype, list(a.shape), a.nbytes) for a in arrays[:8])
    return "%d array(s): %s%s" % (len(arrays), named, ", ..." if len(arrays) > 8 else "")


def _check_agree(comm, arrays) -> None:
    """Every partition must bring the same arrays; if not, each task raises the same error, which
    names what each group of partitions holds."""
    every = repr([(a.dtype.str, a.shape) for a in arrays])
    digest = int.from_bytes(hashlib.sha256(every.encode()).digest()[:8], "little", signed=True)
    mine = _describe(arrays).encode()
    seen = comm.all_gather(np.array([digest, len(mine)], np.int64)).reshape(comm.size, 2)
    if (seen[:, 0] == seen[0, 0]).all():
        return
    width = int(seen[:, 1].max())
    padded = np.zeros(width, np.uint8)
    padded[:len(mine)] = np.frombuffer(mine, np.uint8)
    texts = comm.all_gather(padded).reshape(comm.size, width)
    groups = {}  # what a partition holds -> the partitions that hold it
    for r in range(comm.size):
        groups.setdefault(bytes(texts[r, :seen[r, 1]]).decode(), []).append(r)
    odd_first = sorted(groups.items(), key=lambda g: (len(g[1]), g[1][0]))
    raise CclMismatchError(
        "the partitions disagree (each must hold the same number of arrays of the same shapes and"
        " dtypes): " + "; ".join("partition(s) %s hold %s" % (ps, d) for d, ps in odd_first))
