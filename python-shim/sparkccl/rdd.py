"""Collectives on RDDs of arrays, each partition one rank, on the in-task path.

Each element is one array: a numpy array (any engine dtype and shape), an ``array.array`` or a
list of numbers (float64). Every partition holds the same number of arrays with the same shapes
and dtypes; the i-th arrays of all partitions form one collective. Results come back in the
input's kind: numpy arrays (same dtype), ``array.array`` (same typecode), lists of floats.
"""

from __future__ import annotations

import hashlib
from array import array
from typing import Any, Callable

import numpy as np

from .buffers import asarray
from .comm import OPS, communicator
from .errors import CclArgumentError, CclMismatchError
from .launch import check_slots

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
    check_slots(rdd.ctx, _partitions(rdd))

    def run_partition(items):
        pairs = [_to_numpy(a) for a in items]
        with communicator() as comm:
            _check_agree(comm, [a for a, _ in pairs])
            results = [back(collective(comm, a)) for a, back in pairs]
        return results

    return rdd.barrier().mapPartitions(run_partition)


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
    return "%d array(s): %s" % (len(arrays), ", ".join("%s%s" % (a.dtype, list(a.shape))
                                                      for a in arrays[:8]))


def _check_agree(comm, arrays) -> None:
    """Every partition must bring the same arrays; each task raises the same error if not."""
    desc = _describe(arrays) + repr([(a.dtype.str, a.shape) for a in arrays])
    digest = int.from_bytes(hashlib.sha256(desc.encode()).digest()[:8], "little", signed=True)
    seen = comm.all_gather(np.array([len(arrays), digest], np.int64))
    differ = [r for r in range(comm.size) if (seen[r] != seen[0]).any()]
    if differ:
        raise CclMismatchError(
            "partitions %s hold other arrays than partition 0 (every partition must hold the same"
            " number of arrays of the same shapes and dtypes); partition %d holds %s"
            % (differ, comm.rank, _describe(arrays)))
