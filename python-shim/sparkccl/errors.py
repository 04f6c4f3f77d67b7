"""The exceptions of SparkCCL's Python API.

Inside a barrier task, a failed collective raises a ``CclError`` subclass carrying the engine's
message; at the driver, ``sparkccl.run`` and the RDD functions raise the same class with that
message on the first line.
"""

from __future__ import annotations

import re

__all__ = ["CclError", "CclMismatchError", "CclTimeoutError", "CclAbortError",
           "CclArgumentError"]


class CclError(RuntimeError):
    """A collective failed: a peer died, a connection closed, a wait timed out, or a call was bad."""


class CclMismatchError(CclError):
    """Ranks called different collectives, or one with different arguments, at the same step."""


class CclTimeoutError(CclError):
    """A wait went past the communicator's timeout."""


class CclAbortError(CclError):
    """The communicator was aborted: another rank failed, died or was killed."""


class CclArgumentError(CclError, ValueError):
    """A call's arguments are wrong (shape, dtype, root, op); nothing was sent."""


# the engine's error kinds on the channel (ChannelProtocol.E_*)
_BY_KIND = {1: CclError, 2: CclMismatchError, 3: CclTimeoutError, 4: CclAbortError,
            5: CclArgumentError}
_BY_NAME = {c.__name__: c for c in (CclError, CclMismatchError, CclTimeoutError, CclAbortError,
                                    CclArgumentError)}
_IN_TRACEBACK = re.compile(r"(?:sparkccl\.errors\.)?(Ccl(?:Mismatch|Timeout|Abort|Argument)?Error): (.*)")


def from_kind(kind: int, message: str) -> CclError:
    return _BY_KIND.get(kind, CclError)(message)


def from_job_failure(error: BaseException) -> CclError | None:
    """The ``CclError`` a barrier task raised, found in the text of the failed job's exception.

    Returns ``None`` when the job failed for another reason.
    """
    text = str(error)
    found = None
    for line in text.splitlines():
        m = _IN_TRACEBACK.search(line.strip())
        if m and line.lstrip().startswith(("sparkccl.errors.", "Ccl")):
            found = m  # the last one is the task's own exception, after its traceback
    if found is None:
        return None
    cls = _BY_NAME[found.group(1)]
    return cls("%s in a barrier task: %s" % (found.group(1), found.group(2)))
