"""numpy arrays in memory the executor's engine reads and writes directly.

``empty``, ``zeros`` and ``asarray`` make a file in ``/dev/shm`` (mode 0600), map it here with
``mmap`` and have the executor JVM map it too; then the file is deleted, so nothing is left behind
when either process ends. A collective on such an array (or a contiguous view of one) copies no
bytes between Python and the JVM. Any other numpy array works too, through a staging segment:
one copy in before the collective and one copy out after it.
"""

from __future__ import annotations

import mmap
import os
import secrets
import struct
import weakref
from typing import Sequence, Union

import numpy as np

from . import _channel
from .errors import CclArgumentError, CclError

__all__ = ["empty", "zeros", "asarray", "is_shared", "engine_dtype", "numpy_dtype"]

try:  # bfloat16 as its own numpy type when ml_dtypes is installed
    import ml_dtypes  # type: ignore

    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # else bfloat16 data lives in uint16 arrays, named with dtype="bfloat16"
    _BFLOAT16 = None

ENGINE_DTYPES = ("int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
                 "float32", "float64")

Shape = Union[int, Sequence[int]]
_SHM = "/dev/shm"
_ALIGN = 64

# segment id -> (start address, bytes, channel), for the live mappings of this process; ids are
# the channel's, so a segment of an earlier (broken) channel counts as not shared
_segments: dict[int, tuple[int, int, _channel.Channel]] = {}
_counter = 0


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype holding the engine's type ``name`` (bfloat16: ml_dtypes', else uint16)."""
    if name not in ENGINE_DTYPES:
        raise CclArgumentError("dtype=%r is not a SparkCCL type; expected one of %s"
                               % (name, ", ".join(ENGINE_DTYPES)))
    if name == "bfloat16":
        return _BFLOAT16 if _BFLOAT16 is not None else np.dtype(np.uint16)
    return np.dtype(name)


def engine_dtype(dtype: np.dtype, override: str | None = None) -> str:
    """The engine's name for arrays of ``dtype``; ``override`` reinterprets (e.g. "bfloat16")."""
    dtype = np.dtype(dtype)
    if override is not None:
        if numpy_dtype(override).itemsize != dtype.itemsize:
            raise CclArgumentError("dtype=%r needs %d-byte elements; the array holds %s"
                                   % (override, numpy_dtype(override).itemsize, dtype))
        return override
    if not dtype.isnative and dtype.itemsize > 1:
        raise CclArgumentError("arrays of %s are not in the machine's byte order; use"
                               " arr.astype(arr.dtype.newbyteorder('='))" % dtype.str)
    name = dtype.name
    if name in ENGINE_DTYPES:
        return name
    raise CclArgumentError(
        "arrays of %s are not supported; expected one of %s (bfloat16 as uint16 arrays with"
        " dtype='bfloat16', or ml_dtypes.bfloat16)" % (dtype, ", ".join(ENGINE_DTYPES)))


def _new_mapping(nbytes: int, channel: _channel.Channel) -> tuple[int, mmap.mmap]:
    """A fresh segment of at least ``nbytes`` bytes, mapped here and in the executor."""
    global _counter
    _counter += 1
    size = max(_ALIGN, -(-nbytes // _ALIGN) * _ALIGN)
    name = "sparkccl-%d-%d-%x%s" % (os.getuid(), os.getpid(), _counter, secrets.token_hex(6))
    path = os.path.join(_SHM, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            # reserve the pages now: a full /dev/shm is then an error here, not a SIGBUS later
            os.posix_fallocate(fd, 0, size)
        except OSError as e:
            raise CclError("cannot reserve %d bytes of shared memory in %s: %s (a container's"
                           " /dev/shm may be small: docker run --shm-size, for one)"
                           % (size, _SHM, e)) from None
        mm = mmap.mmap(fd, size)
    except BaseException:
        os.unlink(path)
        raise
    finally:
        os.close(fd)
    try:
        reply = channel.request(_channel.MAP, _channel.pack_string(name) + struct.pack(">q", size),
                                timeout_s=30.0)
    finally:
        if os.path.exists(path):  # the executor deletes it once mapped
            os.unlink(path)
    (segment_id,) = struct.unpack_from(">i", reply)
    start = np.frombuffer(mm, dtype=np.uint8, count=1).ctypes.data
    _segments[segment_id] = (start, size, channel)
    weakref.finalize(mm, _forget, segment_id, channel)
    return segment_id, mm


def use_call_box(channel: _channel.Channel) -> None:
    """Moves ``channel``'s requests into a call box, a segment both sides poll (once)."""
    if not channel.boxed:
        segment_id, mm = _new_mapping(_channel.BOX_BYTES, channel)
        channel.use_box(segment_id, mm)


def _forget(segment_id: int, channel: _channel.Channel) -> None:
    _segments.pop(segment_id, None)
    channel.release(segment_id)


def empty(shape: Shape, dtype=np.float32) -> np.ndarray:
    """A new array in memory shared with the executor (inside a Spark task); values undefined.

    >>> buf = sparkccl.empty((1000,), "float32")   # doctest: +SKIP
    """
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    _, mm = _new_mapping(max(1, count * dtype.itemsize), _channel.get())
    return np.frombuffer(mm, dtype=dtype, count=count).reshape(shape)


def zeros(shape: Shape, dtype=np.float32) -> np.ndarray:
    """``empty`` filled with zeros (a fresh segment is zero already)."""
    return empty(shape, dtype)


def asarray(a, dtype=None) -> np.ndarray:
    """``a`` itself when it already lives in shared memory with that dtype, else a shared copy."""
    if isinstance(a, np.ndarray) and is_shared(a) and (dtype is None or a.dtype == np.dtype(dtype)):
        return a
    src = np.asarray(a, dtype=dtype)
    out = empty(src.shape, src.dtype)
    np.copyto(out, src)
    return out


def locate(a: np.ndarray, channel: _channel.Channel | None = None) -> tuple[int, int] | None:
    """(segment id, byte offset) of a C-contiguous array in a shared segment, else None."""
    if not a.flags.c_contiguous:
        return None
    start = a.__array_interface__["data"][0]
    end = start + a.nbytes
    for segment_id, (s, size, ch) in list(_segments.items()):
        if s <= start and end <= s + size and (channel is None or ch is channel):
            return segment_id, start - s
    return None


def is_shared(a: np.ndarray) -> bool:
    """Whether collectives on ``a`` run on its memory in place, with no copy."""
    return locate(a) is not None


class Staging:
    """The segment that carries non-shared arrays: grown as needed, reused across calls."""

    def __init__(self, channel: _channel.Channel) -> None:
        self.channel = channel
        self._id = -1
        self._mm: mmap.mmap | None = None
        self._size = 0

    def reserve(self, nbytes: int) -> None:
        if nbytes > self._size:
            size = 1 << max(16, (nbytes - 1).bit_length())
            self._mm = None  # the old segment goes (and is released) before the new one comes
            self._id, self._mm = _new_mapping(size, self.channel)
            self._size = size

    def view(self, offset: int, count: int, dtype: np.dtype) -> tuple[int, np.ndarray]:
        return self._id, np.frombuffer(self._mm, dtype=dtype, count=count, offset=offset)


_staging: Staging | None = None


def staging(channel: _channel.Channel) -> Staging:
    """This process's staging segment on ``channel``."""
    global _staging
    if _staging is None or _staging.channel is not channel:
        _staging = Staging(channel)
    return _staging
