"""The private channel from a Python worker to its executor JVM, which runs the collectives.

The executor plugin publishes ``/tmp/sparkccl-<uid>/<executor pid>/`` (mode 0700) holding a Unix
domain socket and a per-executor random secret (mode 0600). A Python worker is a child of
PySpark's daemon, itself a child of the executor JVM (or, without the daemon, a child of the JVM),
so the worker walks its parent processes to find the folder. The worker proves the secret with
HMAC-SHA256 challenge-response (the engine's ``ChallengeResponse``), then sends small request
frames; array data never crosses the socket (see ``buffers``). Where the communicator spins, the
frames move into a call box (``use_box``, ``CallBox.java``): a shared segment both sides poll, the
socket then carrying only wake-ups for a side that slept.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import socket
import stat
import struct
import sys
import threading
import time

from .errors import CclError, CclTimeoutError, from_kind

MAGIC = b"SCCLPY02"
NONCE_BYTES = 32
PROOF_BYTES = 32
MAX_FRAME = 64 * 1024
HANDSHAKE_TIMEOUT_S = 10.0

# requests (ChannelProtocol)
MAP, OPEN, COLLECTIVE, CLOSE, PING, BOX = 1, 2, 3, 4, 5, 6
WAKE = b"W"

# the call box (CallBox.java): numbers as 8-byte words, flags as words too (only their low 4
# bytes are the flag: a little-endian machine), frames at byte offsets
BOX_REQUEST_SEQ, BOX_REPLY_SEQ, BOX_EXECUTOR_SLEEPS, BOX_WORKER_SLEEPS = 0, 8, 16, 24  # words
BOX_REQUEST_AT = 4096
BOX_AREA = 4096 + MAX_FRAME  # a frame (4 + MAX_FRAME bytes), rounded up to pages
BOX_REPLY_AT = BOX_REQUEST_AT + BOX_AREA
BOX_BYTES = BOX_REPLY_AT + BOX_AREA
# the first 8 bytes of a reply that is OK and nothing more, read as one little-endian word: its
# length (1, big-endian) and the OK byte
_PLAIN_OK, _PLAIN_OK_MASK = 1 << 24, (1 << 40) - 1
# how long a call polls for its reply before it sleeps on the socket: a small collective answers
# in microseconds, and a large one does not mind the sleep
BOX_SPIN_S = 200e-6
# a sleeping call looks at the box this often even without a wake-up (see CallBox.java)
BOX_NAP_S = 0.001
# collectives
ALL_REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER, BARRIER = 1, 2, 3, 4, 5

_ACCEPTOR = b"sparkccl acceptor"
_CONNECTOR = b"sparkccl connector"


def base_dir() -> str:
    return "/tmp/sparkccl-%d" % os.getuid()


def _parent(pid: int) -> int:
    with open("/proc/%d/stat" % pid, "rb") as f:
        stat_line = f.read()
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    return int(stat_line[stat_line.rindex(b")") + 2:].split()[1])


def _ancestors(limit: int = 16):
    pid = os.getppid()
    for _ in range(limit):
        if pid <= 1:
            return
        yield pid
        try:
            pid = _parent(pid)
        except (OSError, ValueError):
            return


def _check_private(path: str, mode: int, is_dir: bool) -> None:
    st = os.lstat(path)
    kind_ok = stat.S_ISDIR(st.st_mode) if is_dir else stat.S_ISREG(st.st_mode)
    if not kind_ok or st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) != mode:
        raise CclError("%s is not this user's private %s (mode %o, owner %d); refusing to use it"
                       % (path, "folder" if is_dir else "file", stat.S_IMODE(st.st_mode),
                          st.st_uid))


def find_executor() -> tuple[str, bytes]:
    """The socket path and secret of the executor JVM this worker descends from."""
    base = base_dir()
    seen = []
    for pid in _ancestors():
        seen.append(pid)
        d = os.path.join(base, str(pid))
        if os.path.isdir(d):
            _check_private(base, 0o700, True)
            _check_private(d, 0o700, True)
            secret_file = os.path.join(d, "secret")
            _check_private(secret_file, 0o600, False)
            with open(secret_file, "rb") as f:
                secret = bytes.fromhex(f.read(128).decode("ascii"))
            return os.path.join(d, "channel.sock"), secret
    raise CclError(
        "no SparkCCL executor among this process's parents (pids %s): sparkccl.communicator() and"
        " shared arrays work inside Spark tasks of an application started with"
        " spark.plugins=org.sparkccl.spark.SparkCCLPlugin and spark.ccl.python.channel=true"
        " (the default)" % seen)


class Channel:
    """One authenticated connection; requests are serialised by a lock.

    After the handshake the socket blocks, and the kernel enforces each request's deadline
    (``SO_RCVTIMEO``/``SO_SNDTIMEO``, set again only when it changes): a socket with a Python-level
    timeout polls before every send and receive, and a small collective pays for each system call.
    """

    def __init__(self, path: str, secret: bytes):
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._released: list[int] = []
        self._deadline_s: float | None = -1.0  # none set yet
        self._reply = bytearray(4 + MAX_FRAME)
        self._reply_view = memoryview(self._reply)
        # the call box, once the executor serves this worker through it (use_box)
        self._box = None
        self._words: memoryview | None = None
        self._reply_word: memoryview | None = None
        self._box_body: bytes | None = None
        self._box_kind = -1
        self._seq = 0
        self._wake_buf = bytearray(64)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.settimeout(HANDSHAKE_TIMEOUT_S)
            self._sock.connect(path)
            self._handshake(secret)
            self._sock.settimeout(None)
        except BaseException:
            self._sock.close()
            raise

    def _handshake(self, secret: bytes) -> None:
        opening = MAGIC + struct.pack(">q", self.pid)
        nonce = secrets.token_bytes(NONCE_BYTES)
        self._sock.sendall(opening + nonce)
        theirs = self._recv_exactly(NONCE_BYTES)
        proof = self._recv_exactly(PROOF_BYTES)
        expected = hmac.new(secret, _ACCEPTOR + opening + nonce + theirs, hashlib.sha256).digest()
        if not hmac.compare_digest(proof, expected):
            raise CclError("the process at the SparkCCL channel does not hold the executor's"
                           " secret; refusing to talk to it")
        mine = hmac.new(secret, _CONNECTOR + opening + nonce + theirs, hashlib.sha256).digest()
        self._sock.sendall(mine)
        if self._recv_exactly(1) != b"\x01":
            raise CclError("the executor refused this worker's proof of its secret")

    def _recv_exactly(self, n: int) -> bytes:
        chunks = []
        while n:
            b = self._sock.recv(n)
            if not b:
                raise CclError("the executor closed the SparkCCL channel")
            chunks.append(b)
            n -= len(b)
        return b"".join(chunks)

    def release(self, segment_id: int) -> None:
        """Tells the executor, with the next request, that a segment is no longer used."""
        self._released.append(segment_id)  # may run in a garbage-collector callback: no I/O

    def _set_deadline(self, timeout_s: float | None) -> None:
        """Each send and receive of the next requests fails after ``timeout_s`` (None: never)."""
        if timeout_s == self._deadline_s:
            return
        micros = 0 if timeout_s is None else max(1, int(timeout_s * 1e6))
        tv = struct.pack("ll", micros // 1_000_000, micros % 1_000_000)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
        self._deadline_s = timeout_s

    def _recv_into(self, start: int, end: int) -> int:
        """Receives into the reply buffer from ``start`` until at least ``end``; returns where the
        bytes received end (the executor sends one reply per request, so nothing follows it)."""
        view = self._reply_view
        while start < end:
            n = self._sock.recv_into(view[start:])
            if n == 0:
                raise CclError("the executor closed the SparkCCL channel")
            start += n
        return start

    @property
    def boxed(self) -> bool:
        """Whether requests go through the call box."""
        return self._box is not None

    def use_box(self, segment_id: int, mm) -> None:
        """Moves requests into the call box ``mm`` (segment ``segment_id``, mapped by the executor):
        this worker's communicators spin, so both sides poll instead of sleeping on the socket."""
        if sys.byteorder != "little":
            return  # the flags are read as the low half of a word
        self.request(BOX, struct.pack(">i", segment_id), 30.0)
        self._box = mm
        self._words = memoryview(mm)[:BOX_REQUEST_AT].cast("Q")
        self._reply_word = memoryview(mm)[BOX_REPLY_AT:BOX_REPLY_AT + 8].cast("Q")

    def request(self, kind: int, body: bytes, timeout_s: float | None) -> memoryview:
        """Sends one request and returns the reply's fields after its OK byte."""
        if self._box is not None:
            return self._box_request(kind, body, timeout_s)
        with self._lock:
            released = self._take_released()
            head = _head(kind, released, body)
            try:
                self._set_deadline(timeout_s)
                self._sock.sendall(head + body)
                got = self._recv_into(0, 4)
                (length,) = struct.unpack_from(">I", self._reply)
                if length < 1 or length > MAX_FRAME:
                    raise CclError("the executor sent a reply of %d bytes; expected 1..%d"
                                   % (length, MAX_FRAME))
                self._recv_into(got, 4 + length)
                reply = bytes(self._reply_view[4:4 + length]) if length > 1 else self._reply[4:5]
            except (socket.timeout, BlockingIOError):
                self.close()
                raise CclTimeoutError("no answer from the executor within %.0f s" % timeout_s)
            except OSError as e:
                self.close()
                raise CclError("the SparkCCL channel to the executor failed: %s" % e) from None
        return _fields(reply)

    def _take_released(self) -> tuple | list:
        """Up to 1000 released segment ids to name in the next request (lock held)."""
        if not self._released:
            return ()
        released, self._released = self._released[:1000], self._released[1000:]
        return released

    def _box_request(self, kind: int, body: bytes, timeout_s: float | None) -> memoryview:
        """``request`` through the call box: write the frame, bump the request's number, poll
        for the reply's number, and sleep on the socket only after ``BOX_SPIN_S``."""
        with self._lock:
            box, words = self._box, self._words
            released = self._take_released()
            if released or body is not self._box_body or kind != self._box_kind:
                # a repeated request (same body object) is still in the box as it was
                head = _head(kind, released, body)
                end = BOX_REQUEST_AT + len(head)
                box[BOX_REQUEST_AT:end] = head
                box[end:end + len(body)] = body
                self._box_body = None if released else body
                self._box_kind = kind
            seq = self._seq + 1
            self._seq = seq
            words[BOX_REQUEST_SEQ] = seq
            woke = False
            if words[BOX_EXECUTOR_SLEEPS] & 0xffffffff:
                self._wake()
                woke = True
            if words[BOX_REPLY_SEQ] != seq:
                spin_end = time.perf_counter() + BOX_SPIN_S
                i = 0
                while words[BOX_REPLY_SEQ] != seq:
                    i += 1
                    if not i & 63 and time.perf_counter() > spin_end:
                        self._box_sleep(seq, woke, timeout_s)
                        break
            if self._reply_word[0] & _PLAIN_OK_MASK == _PLAIN_OK:
                return _EMPTY
            (length,) = struct.unpack_from(">I", box, BOX_REPLY_AT)
            if length < 1 or length > MAX_FRAME:
                self.close()
                raise CclError("the executor left a reply of %d bytes; expected 1..%d"
                               % (length, MAX_FRAME))
            reply = bytes(box[BOX_REPLY_AT + 4:BOX_REPLY_AT + 4 + length])
        return _fields(reply)

    def _wake(self) -> None:
        """Wakes the executor's session thread, asleep on the socket."""
        try:
            self._sock.send(WAKE)
        except BlockingIOError:
            pass  # the socket is full of wake-ups the session has yet to read
        except OSError as e:
            self.close()
            raise CclError("the SparkCCL channel to the executor failed: %s" % e) from None

    def _box_sleep(self, seq: int, woke: bool, timeout_s: float | None) -> None:
        """Waits for reply ``seq`` asleep on the socket, looking every ``BOX_NAP_S``."""
        words = self._words
        deadline = None if timeout_s is None else time.perf_counter() + timeout_s
        words[BOX_WORKER_SLEEPS] = 1
        try:
            self._set_deadline(BOX_NAP_S)
            while words[BOX_REPLY_SEQ] != seq:
                # only a session asleep needs the byte (one busy with the request reads none,
                # and the socket would fill); read again after each nap, when no store of this
                # process can still be in flight
                if not woke and words[BOX_EXECUTOR_SLEEPS] & 0xffffffff:
                    self._wake()
                    woke = True
                try:
                    if self._sock.recv_into(self._wake_buf) == 0:
                        self.close()
                        raise CclError("the executor closed the SparkCCL channel")
                except (socket.timeout, BlockingIOError, InterruptedError):
                    pass
                except OSError as e:
                    self.close()
                    raise CclError("the SparkCCL channel to the executor failed: %s" % e) from None
                if deadline is not None and time.perf_counter() > deadline:
                    self.close()
                    raise CclTimeoutError("no answer from the executor within %.0f s" % timeout_s)
        finally:
            if self._words is not None:  # a failure above closed the channel and its views
                words[BOX_WORKER_SLEEPS] = 0

    def close(self) -> None:
        global _current
        self._box = None
        if self._words is not None:
            self._words.release()
            self._reply_word.release()
            self._words = self._reply_word = None
        try:
            self._sock.close()
        finally:
            if _current is self:
                _current = None


_EMPTY = memoryview(b"")


def _head(kind: int, released, body: bytes) -> bytes:
    """A request frame's length, type and released segment ids; ``body`` follows."""
    return struct.pack(">IBH%di" % len(released), 3 + 4 * len(released) + len(body), kind,
                       len(released), *released)


def _fields(reply: bytes) -> memoryview:
    """A reply's fields after its OK byte, or its error raised as the CclError it names."""
    if reply[0] == 0:
        return memoryview(reply)[1:]
    (n,) = struct.unpack_from(">I", reply, 2)
    raise from_kind(reply[1], bytes(reply[6:6 + n]).decode("utf-8", "replace"))

_current: Channel | None = None
_current_lock = threading.Lock()


def get() -> Channel:
    """This process's channel to its executor, connected on first use."""
    global _current
    with _current_lock:
        ch = _current
        if ch is None or ch.pid != os.getpid():
            path, secret = find_executor()
            ch = _current = Channel(path, secret)
        return ch


def pack_string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack(">H", len(b)) + b
