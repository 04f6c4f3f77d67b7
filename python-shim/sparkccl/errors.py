"""The errors SparkCCL raises in Python, one class per kind of engine failure.

Inside a barrier task, a failed collective raises a :class:`CclError` subclass carrying the
engine's message. At the driver, ``sparkccl.run`` and the RDD functions raise the same class with
that message on its first line, never a Py4J stack dump::

    import sparkccl
    from sparkccl.errors import CclMismatchError

    try:
        summed = sparkccl.all_reduce(rdd)   # runs its barrier stage here
    except CclMismatchError as e:
        print(e)   # CclMismatchError in a barrier task: the partitions disagree (...):
                   # partition(s) [2] hold 1 array(s): float32[2] (8 bytes); partition(s) ...

:func:`from_java_message` turns the text of a Java exception (or of a failed Spark job that
names one) into the matching subclass; :func:`from_job_failure` finds the ``CclError`` a Python
barrier task raised in the text of the failed job; :func:`from_kind` makes the error the
executor's channel answers with.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterator

__all__ = [
    "CclError",
    "CclMismatchError",
    "CclTimeoutError",
    "CclAbortError",
    "CclArgumentError",
    "ccl_errors",
    "from_java_message",
    "from_job_failure",
    "from_kind",
    "from_py4j",
    "java_call",
    "job_call",
]


class CclError(RuntimeError):
    """A collective failed: a peer died, a connection closed, a wait timed out, or a call was bad;
    the message is the engine's."""


class CclMismatchError(CclError):
    """Ranks called different collectives, or the same one with different sizes or types."""


class CclTimeoutError(CclError, TimeoutError):
    """A collective or the communicator's forming did not finish within its deadline."""


class CclAbortError(CclError):
    """The communicator was aborted: a peer failed, died or called abort."""


class CclArgumentError(CclError, ValueError):
    """A call's arguments are wrong (shape, dtype, root, op, slots); nothing was sent."""


_ALL = (CclError, CclMismatchError, CclTimeoutError, CclAbortError, CclArgumentError)

# The engine's error kinds on the executor's channel (ChannelProtocol.E_*).
_BY_KIND = {1: CclError, 2: CclMismatchError, 3: CclTimeoutError, 4: CclAbortError,
            5: CclArgumentError}
_BY_NAME = {c.__name__: c for c in _ALL}
# "sparkccl.errors.CclMismatchError: message", the last line of a Python task's traceback.
_IN_TRACEBACK = re.compile(
    r"(?:sparkccl\.errors\.)?(Ccl(?:Mismatch|Timeout|Abort|Argument)?Error): (.*)")


def from_kind(kind: int, message: str) -> CclError:
    """The error for an answer of the executor's channel: its kind code and the engine's
    message (the kind the engine found on the Java exception or its causes)."""
    return _BY_KIND.get(kind, CclError)(message)


def from_job_failure(error: BaseException) -> CclError | None:
    """The :class:`CclError` a Python barrier task raised, found in the text of the failed job's
    exception (the Python traceback Spark carries), named on the first line of its message;
    ``None`` when the job failed for another reason."""
    found = None
    for line in str(error).splitlines():
        m = _IN_TRACEBACK.search(line.strip())
        if m and line.lstrip().startswith(("sparkccl.errors.", "Ccl")):
            found = m  # the last one is the task's own exception, after its traceback
    if found is None:
        return None
    cls = _BY_NAME[found.group(1)]
    return cls("%s in a barrier task: %s" % (found.group(1), found.group(2)))


# Java class simple name -> Python class; the order is the priority when a text names several
# (a rank aborted because a peer found a mismatch is told about the mismatch).
_BY_JAVA_CLASS = (
    ("CclMismatchException", CclMismatchError),
    ("CclTimeoutException", CclTimeoutError),
    ("CclAbortedException", CclAbortError),
    ("CclRemoteException", CclAbortError),
    ("CclException", CclError),
    ("IllegalArgumentException", CclArgumentError),
)

# "org.sparkccl.CclMismatchException: rank 1 called ..." anywhere in a text, up to its line end.
_JAVA_LINE = re.compile(
    r"(?:[A-Za-z_$][\w$]*\.)+(?P<cls>"
    + "|".join(name for name, _ in _BY_JAVA_CLASS)
    + r")\b(?::[ \t]*(?P<msg>[^\r\n]*))?"
)

# The engine's own wording, for texts that name no Java class (a peer's forwarded message).
_MISMATCH_WORDS = re.compile(r"\bcalled .+ as operation #\d+ but rank \d+ called ")
_TIMEOUT_WORDS = re.compile(r"\btimed out\b|\btimeout\b|\bin time\b", re.IGNORECASE)
_ABORT_WORDS = re.compile(r"\baborted\b|\babort\(\)", re.IGNORECASE)


def from_java_message(text):
    """The :class:`CclError` subclass for the text of a Java exception, with a short message.

    ``text`` may be one exception's message, its ``toString()`` (``org.sparkccl.X: message``)
    or a whole stack trace or Spark job failure that names it somewhere. The message kept is the
    first SparkCCL exception line's; the class is that of the most specific failure named
    (mismatch, then timeout, then abort). A text that names no Java class is classified by the
    engine's wording.

    >>> from_java_message("org.sparkccl.CclTimeoutException: rank 0: timed out").args[0]
    'rank 0: timed out'
    """
    text = "" if text is None else str(text)
    found = [(m.group("cls"), (m.group("msg") or "").strip()) for m in _JAVA_LINE.finditer(text)]
    if found:
        names = {name for name, _ in found}
        message = next((msg for _, msg in found if msg), "") or _first_line(text)
        for name, cls in _BY_JAVA_CLASS:
            if name in names:
                if cls in (CclAbortError, CclError) and _MISMATCH_WORDS.search(text):
                    return CclMismatchError(message)
                return cls(message)
    message = _first_line(text)
    if _MISMATCH_WORDS.search(text):
        return CclMismatchError(message)
    if _TIMEOUT_WORDS.search(text):
        return CclTimeoutError(message)
    if _ABORT_WORDS.search(text):
        return CclAbortError(message)
    return CclError(message)


def _first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "SparkCCL failed (no message)"


def from_py4j(error):
    """The :class:`CclError` for a JVM failure seen in Python (a ``Py4JJavaError``, or the
    exception PySpark converts some Java exceptions into) whose Java exception or a cause is
    SparkCCL's or an ``IllegalArgumentException``; ``None`` when it is not ours."""
    java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    text = _java_text(java) or str(error)
    if not _JAVA_LINE.search(text):
        return None
    return from_java_message(text)


def java_call(fn, *args):
    """Calls ``fn(*args)`` (a Py4J call into the JVM) and raises a failure of SparkCCL's as a
    short :class:`CclError` instead of a ``Py4JJavaError`` and its Java stack trace."""
    try:
        return fn(*args)
    except _jvm_errors() as e:
        ccl = from_py4j(e)
        if ccl is None:
            raise
    raise ccl from None


@contextlib.contextmanager
def ccl_errors() -> Iterator[None]:
    """Raises a Spark job that fails inside the block because a barrier task raised a
    :class:`CclError` (or because SparkCCL's Java side failed) as that error, its class and the
    engine's message on the first line, instead of Spark's ``Py4JJavaError`` or
    ``PythonException`` with the task's traceback somewhere inside; the whole Spark failure stays
    in the error's ``job_error``. Other failures pass through unchanged. For your own barrier
    jobs; ``sparkccl.run`` and the RDD functions do this already::

        with sparkccl.ccl_errors():
            rdd.barrier().mapPartitions(train).collect()
    """
    try:
        yield
    except _jvm_errors() as e:
        ccl = from_job_failure(e) or from_py4j(e)
        if ccl is None:
            raise
        ccl.job_error = e  # for whoever wants the stack traces
        raise ccl from None


def job_call(fn, *args):
    """Calls ``fn(*args)`` (a Spark action) inside :func:`ccl_errors`."""
    with ccl_errors():
        return fn(*args)


def _jvm_errors():
    """What a failed Py4J call raises: ``Py4JJavaError``, or, once a SparkSession is active,
    PySpark's conversion of some Java exceptions (``IllegalArgumentException``...)."""
    from py4j.protocol import Py4JJavaError

    try:
        from pyspark.errors.exceptions.captured import CapturedException
    except ImportError:
        return (Py4JJavaError,)
    return (Py4JJavaError, CapturedException)


def _java_text(throwable):
    """``toString()`` of a Java throwable and of each of its causes, one a line."""
    lines = []
    seen = 0
    while throwable is not None and seen < 16:
        try:
            lines.append(str(throwable.toString()))
            throwable = throwable.getCause()
        except Exception:  # the JVM is gone: keep what was read
            break
        seen += 1
    return "\n".join(lines)
