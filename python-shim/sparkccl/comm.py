"""A communicator inside a Spark barrier task, on the executor's engine.

    def train(rows):
        with sparkccl.communicator() as comm:      # rank = partition id, size = tasks
            grad = sparkccl.zeros(10_000, "float32")
            for step in range(100):
                grad[:] = compute_gradient(rows)
                comm.all_reduce(grad, op="avg")    # in place, no copy: grad is shared
        yield comm.rank

    rdd.barrier().mapPartitions(train).collect()

The communicator forms through the executor plugin's rendezvous, as a Java task's does, and every
collective runs in the executor JVM on the array's memory.
"""

from __future__ import annotations

import struct
from typing import Optional

import numpy as np

from . import _channel
from .buffers import engine_dtype, locate, staging, use_call_box
from .errors import CclArgumentError, CclError

__all__ = ["Communicator", "communicator"]

OPS = ("sum", "prod", "min", "max", "avg")


class Communicator:
    """The ranks of one barrier stage. Use it as a context manager, or call ``close()``.

    Every rank must make the same calls in the same order with matching arguments; a rank that
    does not makes every rank raise ``CclMismatchError`` (or ``CclTimeoutError``).
    """

    def __init__(self, channel: _channel.Channel, comm_id: int, rank: int, size: int,
                 timeout_s: float):
        self._channel = channel
        self._id = comm_id
        self._rank = rank
        self._size = size
        self._timeout_s = timeout_s
        self._wait_s = timeout_s * 4 + 60.0  # the channel's deadline for one call
        self._closed = False
        # the last request on shared arrays, reused while the next call is the same: a training
        # loop repeats one all_reduce on one array, and building its request cost about 9 us of
        # Python per call (send, recv, (kind, count, dtype, op, root), body, send's dtype: an
        # array's dtype and writability can change in place); the arrays are held, so their
        # memory and segments stay as the body names them
        self._last: Optional[tuple] = None

    @property
    def rank(self) -> int:
        """This task's rank: its partition id."""
        return self._rank

    @property
    def size(self) -> int:
        """The number of ranks: the barrier stage's tasks."""
        return self._size

    def all_reduce(self, arr: np.ndarray, op: str = "sum", *, dtype: Optional[str] = None
                   ) -> np.ndarray:
        """Replaces ``arr`` by the element-wise ``op`` (sum, prod, min, max, avg) over ranks."""
        last = self._last
        if (last is not None and last[0] is arr and last[1] is arr
                and last[2] == (_channel.ALL_REDUCE, arr.size, dtype, op, 0)
                and arr.dtype == last[4] and arr.flags.writeable and not self._closed):
            # the training loop's call, written out: each step of _run costs a small call
            self._channel.request(_channel.COLLECTIVE, last[3], self._wait_s)
            return arr
        self._check_op(op)
        self._run(_channel.ALL_REDUCE, arr, arr, arr.size if _is_array(arr) else 0, dtype, op, 0)
        return arr

    def broadcast(self, arr: np.ndarray, root: int = 0, *, dtype: Optional[str] = None
                  ) -> np.ndarray:
        """Replaces ``arr`` on every rank by rank ``root``'s ``arr``."""
        if not isinstance(root, (int, np.integer)) or not 0 <= root < self._size:
            raise CclArgumentError("root=%r is not a rank; expected 0..%d" % (root, self._size - 1))
        self._run(_channel.BROADCAST, arr, arr, arr.size if _is_array(arr) else 0, dtype, "sum",
                  int(root))
        return arr

    def all_gather(self, arr: np.ndarray, out: Optional[np.ndarray] = None, *,
                   dtype: Optional[str] = None) -> np.ndarray:
        """``out`` (new when not given, shape ``(size,) + arr.shape``) gets every rank's ``arr``
        in rank order."""
        _need_array("arr", arr)
        if out is None:
            out = np.empty((self._size,) + arr.shape, arr.dtype)
        _need_array("out", out)
        if out.size != arr.size * self._size:
            raise CclArgumentError("out holds %d elements; all_gather of %d elements from %d ranks"
                                   " needs %d" % (out.size, arr.size, self._size,
                                                  arr.size * self._size))
        self._run(_channel.ALL_GATHER, arr, out, arr.size, dtype, "sum", 0)
        return out

    def reduce_scatter(self, arr: np.ndarray, out: Optional[np.ndarray] = None, op: str = "sum",
                       *, dtype: Optional[str] = None) -> np.ndarray:
        """``out`` (new when not given) gets block ``rank`` of the ``op`` over ranks of ``arr``,
        which holds ``size`` equal blocks."""
        self._check_op(op)
        _need_array("arr", arr)
        if arr.size % self._size:
            raise CclArgumentError("arr holds %d elements, not a multiple of the %d ranks"
                                   % (arr.size, self._size))
        if out is None:
            out = np.empty(arr.size // self._size, arr.dtype)
        _need_array("out", out)
        if out.size * self._size != arr.size:
            raise CclArgumentError("out holds %d elements; reduce_scatter of %d elements over %d"
                                   " ranks gives %d" % (out.size, arr.size, self._size,
                                                        arr.size // self._size))
        self._run(_channel.REDUCE_SCATTER, arr, out, out.size, dtype, op, 0)
        return out

    def barrier(self) -> None:
        """Returns once every rank has called it."""
        self._request(_channel.BARRIER, "int32", "sum", 0, 0, (0, 0, 0), (0, 0, 0))

    def close(self) -> None:
        """Releases the communicator (the task's end does too); idempotent."""
        if not self._closed:
            self._closed = True
            self._last = None
            try:
                self._channel.request(_channel.CLOSE, struct.pack(">i", self._id), 30.0)
            except CclError:
                pass  # the channel is gone, and the executor released it already

    def __enter__(self) -> "Communicator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Communicator(rank=%d, size=%d%s)" % (self._rank, self._size,
                                                     ", closed" if self._closed else "")

    # ---- internals ----

    def _check_op(self, op: str) -> None:
        if op not in OPS:
            raise CclArgumentError("op=%r is not a reduction; expected one of %s"
                                   % (op, ", ".join(OPS)))

    def _run(self, kind: int, send: np.ndarray, recv: np.ndarray, count: int,
             dtype: Optional[str], op: str, root: int) -> None:
        last = self._last
        if (last is not None and last[0] is send and last[1] is recv
                and last[2] == (kind, count, dtype, op, root) and send.dtype == last[4]
                and recv.flags.writeable and not self._closed):
            self._channel.request(_channel.COLLECTIVE, last[3], self._wait_s)
            return
        _need_array("arr", send)
        _need_array("out", recv)
        if not recv.flags.writeable:
            raise CclArgumentError("the result array is read-only")
        name = engine_dtype(send.dtype, dtype)
        if recv.dtype != send.dtype:
            raise CclArgumentError("out is %s but arr is %s; expected the same dtype"
                                   % (recv.dtype, send.dtype))
        if self._closed:
            raise CclError("the communicator is closed")
        ch = self._channel
        sref, rref = locate(send, ch), locate(recv, ch)
        staged = []  # (array, offset in staging) copied in before and out after
        need = 0
        if sref is None:
            staged.append((send, 0))
            need = _round(send.nbytes)
        if recv is not send and rref is None:
            staged.append((recv, need))
            need += _round(recv.nbytes)
        if staged:
            st = staging(ch)
            st.reserve(need)
            views = [st.view(off, a.size, a.dtype) for a, off in staged]
            for (a, off), (sid, v) in zip(staged, views):
                if a is send:
                    np.copyto(v.reshape(a.shape), a)
                    sref = (sid, off)
                    if recv is send:
                        rref = sref
                else:
                    rref = (sid, off)
        body = self._request(kind, name, op, root, count, (sref[0], sref[1], send.nbytes),
                             (rref[0], rref[1], recv.nbytes))
        if staged:
            self._last = None
            for (a, off), (_, v) in zip(staged, views):
                if a is recv:
                    np.copyto(a, v.reshape(a.shape))
        else:
            self._last = (send, recv, (kind, count, dtype, op, root), body, send.dtype)

    def _request(self, kind, dtype_name, op, root, count, sref, rref) -> bytes:
        """Sends one collective's request; returns its body."""
        if self._closed:
            raise CclError("the communicator is closed")
        body = (struct.pack(">iB", self._id, kind) + _channel.pack_string(dtype_name)
                + _channel.pack_string(op)
                + struct.pack(">iqiqqiqq", root, count, sref[0], sref[1], sref[2], rref[0],
                              rref[1], rref[2]))
        self._channel.request(_channel.COLLECTIVE, body, self._wait_s)
        return body


def _round(n: int) -> int:
    return -(-n // 64) * 64


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray)


def _need_array(name: str, a) -> None:
    if not isinstance(a, np.ndarray):
        raise CclArgumentError("%s is a %s; expected a numpy array (numpy.asarray, or"
                               " sparkccl.asarray for one the engine uses in place)"
                               % (name, type(a).__name__))


def communicator(timeout: Optional[float] = None) -> Communicator:
    """The communicator of the current barrier task: rank = partition id, size = tasks.

    Call it inside ``rdd.barrier().mapPartitions(fn)`` or ``df.mapInPandas(fn, barrier=True)``;
    every task of the stage must call it. ``timeout`` (seconds) replaces the executor's
    ``spark.ccl.timeout`` for this communicator's waits.
    """
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        raise CclError("sparkccl.communicator() runs inside a Spark barrier task:"
                       " rdd.barrier().mapPartitions(fn) or df.mapInPandas(fn, barrier=True)")
    timeout_ms = 0 if timeout is None else max(1, int(timeout * 1000))
    ch = _channel.get()
    wait_s = (timeout if timeout is not None else 1800.0) + 60.0
    return _open(ch, ctx.taskAttemptId(), timeout_ms, wait_s)


def _open(ch: _channel.Channel, attempt: int, timeout_ms: int, wait_s: float) -> Communicator:
    """Forms the communicator of task attempt ``attempt`` through the executor."""
    reply = ch.request(_channel.OPEN, struct.pack(">qq", attempt, timeout_ms), wait_s)
    comm_id, rank, size, effective_ms, spins = struct.unpack_from(">iiiqB", reply)
    if spins:
        # the communicator's threads spin (the host has a core for each): so do the calls
        # between this worker and the executor, which then cost no thread wake-up
        use_call_box(ch)
    return Communicator(ch, comm_id, rank, size, effective_ms / 1000.0)
