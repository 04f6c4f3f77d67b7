package org.sparkccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * Test-only: one rank's part of one allReduce, broadcast, reduce, allGather or reduceScatter: its
 * buffers (inputs from {@link Reference#fill}, everything else random bytes), the call, and the
 * check of the result against {@link Reference} and of every byte that must stay untouched.
 *
 * <p>Every rank's inputs come from {@link Spec#inputs}, so any rank (or process) can rebuild all of
 * them from the random seed. Buffer conventions are NCCL's; in place means one buffer object passed
 * as both send and recv.
 */
final class CollectiveCase {
  /** Bytes after the region a collective may write that must stay untouched. */
  static final int PAD = RankHarness.PAD;

  enum Kind {
    ALL_REDUCE("allReduce"),
    BROADCAST("broadcast"),
    REDUCE("reduce"),
    ALL_GATHER("allGather"),
    REDUCE_SCATTER("reduceScatter");

    private final String name;

    Kind(String name) {
      this.name = name;
    }

    boolean reduces() {
      return this == ALL_REDUCE || this == REDUCE || this == REDUCE_SCATTER;
    }

    boolean rooted() {
      return this == BROADCAST || this == REDUCE;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /**
   * One case. {@code count} is the API's count: allReduce/broadcast/reduce count, allGather
   * sendCount, reduceScatter recvCount. Out of place with {@code root != 0}, non-root ranks pass a
   * null send (broadcast) or recv (reduce), which the API allows there.
   */
  record Spec(Kind kind, DataType dtype, ReduceOp op, int count, int root, boolean inPlace) {
    boolean nullOnNonRoot() {
      return kind.rooted() && !inPlace && root != 0;
    }

    int sendElems(int n) {
      return kind == Kind.REDUCE_SCATTER ? n * count : count;
    }

    int recvElems(int n) {
      return kind == Kind.ALL_GATHER ? n * count : count;
    }

    /** Every rank's input ({@link #sendElems} elements), never zero; odd integers for prod. */
    ByteBuffer[] inputs(int n, long seed) {
      ByteBuffer[] in = new ByteBuffer[n];
      int elems = sendElems(n);
      for (int r = 0; r < n; r++) {
        in[r] = Reference.heap(elems * dtype.size());
        Reference.fill(
            in[r], elems, dtype, new SplittableRandom(seed * 1_000_003L + r), op == ReduceOp.PROD);
      }
      return in;
    }

    @Override
    public String toString() {
      return kind
          + " "
          + dtype
          + (kind.reduces() ? " " + op : "")
          + " count="
          + count
          + (kind.rooted() ? " root=" + root : "")
          + (inPlace ? " in-place" : " out-of-place")
          + (nullOnNonRoot()
              ? (kind == Kind.BROADCAST ? " (send" : " (recv") + "=null off root)"
              : "");
    }
  }

  final Spec spec;
  final int rank;
  final int n;
  private final DeviceBuffer send; // null where unused
  private final DeviceBuffer recv; // == send in place; null where unused
  private final ByteBuffer sendBefore; // what send held before the call (out of place)
  private final ByteBuffer recvBefore; // what recv held before the call

  private CollectiveCase(
      Spec spec,
      int rank,
      int n,
      DeviceBuffer send,
      DeviceBuffer recv,
      ByteBuffer sendBefore,
      ByteBuffer recvBefore) {
    this.spec = spec;
    this.rank = rank;
    this.n = n;
    this.send = send;
    this.recv = recv;
    this.sendBefore = sendBefore;
    this.recvBefore = recvBefore;
  }

  /** {@link #prepare(Device, Spec, int, int, ByteBuffer[], long)} in host memory. */
  static CollectiveCase prepare(Spec s, int rank, int n, ByteBuffer[] inputs, long seed) {
    return prepare(HostDevice.INSTANCE, s, rank, n, inputs, seed);
  }

  /**
   * Allocates {@code rank}'s buffers for {@code spec} on {@code device} and fills them; {@code
   * inputs} from {@link Spec#inputs}.
   */
  static CollectiveCase prepare(
      Device device, Spec s, int rank, int n, ByteBuffer[] inputs, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed * 7_919L + 100_000L + rank);
    int size = s.dtype().size();
    int sendBytes = s.sendElems(n) * size;
    int recvBytes = s.recvElems(n) * size;
    boolean root = rank == s.root();
    ByteBuffer input = inputs[rank];
    DeviceBuffer send = null;
    DeviceBuffer recv = null;
    try {
      if (s.inPlace()) {
        int bytes = Math.max(sendBytes, recvBytes) + PAD;
        ByteBuffer img = Reference.heap(bytes);
        Reference.fillBytes(img, 0, bytes, rnd);
        boolean hasInput = s.kind() != Kind.BROADCAST || root;
        if (hasInput) {
          int at = s.kind() == Kind.ALL_GATHER ? rank * sendBytes : 0;
          img.put(at, input, 0, sendBytes);
        }
        send = recv = allocate(device, img);
        return new CollectiveCase(s, rank, n, send, recv, null, img);
      }
      ByteBuffer sendImg = null;
      boolean noSend = s.kind() == Kind.BROADCAST && !root && s.nullOnNonRoot();
      if (!noSend) {
        sendImg = Reference.heap(sendBytes + PAD);
        if (s.kind() != Kind.BROADCAST || root) {
          sendImg.put(0, input, 0, sendBytes);
          Reference.fillBytes(sendImg, sendBytes, sendBytes + PAD, rnd);
        } else {
          Reference.fillBytes(sendImg, 0, sendBytes + PAD, rnd);
        }
        send = allocate(device, sendImg);
      }
      ByteBuffer recvImg = null;
      boolean noRecv = s.kind() == Kind.REDUCE && !root && s.nullOnNonRoot();
      if (!noRecv) {
        recvImg = Reference.heap(recvBytes + PAD);
        Reference.fillBytes(recvImg, 0, recvBytes + PAD, rnd);
        recv = allocate(device, recvImg);
      }
      return new CollectiveCase(s, rank, n, send, recv, sendImg, recvImg);
    } catch (RuntimeException | Error e) {
      RankHarness.closeBuffer(send);
      RankHarness.closeBuffer(recv);
      throw e;
    }
  }

  private static DeviceBuffer allocate(Device device, ByteBuffer img) {
    DeviceBuffer b = device.allocate(img.capacity());
    b.copyFromHost(img.duplicate().clear().order(ByteOrder.nativeOrder()), 0);
    return b;
  }

  /** Starts this rank's call through the asynchronous API. */
  CompletableFuture<Void> launch(Communicator c) {
    Spec s = spec;
    return switch (s.kind()) {
      case ALL_REDUCE -> c.allReduceAsync(send, recv, s.count(), s.dtype(), s.op());
      case BROADCAST ->
          s.inPlace()
              ? c.broadcastAsync(recv, s.count(), s.dtype(), s.root())
              : c.broadcastAsync(send, recv, s.count(), s.dtype(), s.root());
      case REDUCE -> c.reduceAsync(send, recv, s.count(), s.dtype(), s.op(), s.root());
      case ALL_GATHER -> c.allGatherAsync(send, recv, s.count(), s.dtype());
      case REDUCE_SCATTER -> c.reduceScatterAsync(send, recv, s.count(), s.dtype(), s.op());
    };
  }

  /** Runs this rank's call through the blocking API. */
  void runBlocking(Communicator c) {
    Spec s = spec;
    switch (s.kind()) {
      case ALL_REDUCE -> c.allReduce(send, recv, s.count(), s.dtype(), s.op());
      case BROADCAST -> {
        if (s.inPlace()) {
          c.broadcast(recv, s.count(), s.dtype(), s.root());
        } else {
          c.broadcast(send, recv, s.count(), s.dtype(), s.root());
        }
      }
      case REDUCE -> c.reduce(send, recv, s.count(), s.dtype(), s.op(), s.root());
      case ALL_GATHER -> c.allGather(send, recv, s.count(), s.dtype());
      case REDUCE_SCATTER -> c.reduceScatter(send, recv, s.count(), s.dtype(), s.op());
    }
  }

  /**
   * Checks this rank's buffers after the call.
   *
   * @param inputs every rank's input, as passed to {@link #prepare}
   * @return null when all is right, otherwise what is wrong, naming the rank
   */
  String check(ByteBuffer[] inputs) {
    Spec s = spec;
    int size = s.dtype().size();
    int count = s.count();
    int block = count * size;
    StringBuilder p = new StringBuilder();
    if (send != null && send != recv) {
      same(p, "send buffer was modified", read(send), sendBefore, 0, sendBefore.capacity());
    }
    ByteBuffer got = recv == null ? null : read(recv);
    switch (s.kind()) {
      case BROADCAST -> {
        same(p, "result differs from the root's input", got, inputs[s.root()], 0, block);
        same(p, "bytes after the result were overwritten", got, recvBefore, block, PAD);
      }
      case ALL_REDUCE, REDUCE -> {
        if (s.kind() == Kind.ALL_REDUCE || rank == s.root()) {
          Reference.Expected e = Reference.allReduce(inputs, count, s.dtype(), s.op());
          String m = e.mismatches(native_(got.slice(0, block)));
          if (m != null) {
            p.append(" result: ").append(m).append(';');
          }
          same(p, "bytes after the result were overwritten", got, recvBefore, block, PAD);
        } else if (got != null) {
          same(
              p,
              s.inPlace() ? "non-root buffer was modified" : "non-root recv was modified",
              got,
              recvBefore,
              0,
              recvBefore.capacity());
        }
      }
      case ALL_GATHER -> {
        for (int k = 0; k < n; k++) {
          sameAt(
              p,
              "block " + k + " differs from rank " + k + "'s input",
              got,
              k * block,
              inputs[k],
              0,
              block);
        }
        same(p, "bytes after the result were overwritten", got, recvBefore, n * block, PAD);
      }
      case REDUCE_SCATTER -> {
        ByteBuffer[] blocks = new ByteBuffer[n];
        for (int k = 0; k < n; k++) {
          blocks[k] = native_(inputs[k].slice(rank * block, block));
        }
        int at = s.inPlace() ? rank * block : 0;
        Reference.Expected e = Reference.allReduce(blocks, count, s.dtype(), s.op());
        String m = e.mismatches(native_(got.slice(at, block)));
        if (m != null) {
          p.append(" result (at byte ").append(at).append("): ").append(m).append(';');
        }
        int end = s.inPlace() ? n * block : block;
        same(p, "bytes after the buffer's data were overwritten", got, recvBefore, end, PAD);
      }
    }
    return p.length() == 0 ? null : "rank " + rank + ":" + p;
  }

  /**
   * The bytes of this rank's result that every rank must hold alike (an allReduce's, a broadcast's,
   * an allGather's), for comparing ranks bit for bit; null for a reduce or a reduceScatter, whose
   * ranks hold different parts.
   */
  ByteBuffer sharedResult() {
    Spec s = spec;
    if (s.kind() == Kind.REDUCE || s.kind() == Kind.REDUCE_SCATTER) {
      return null;
    }
    return read(recv).slice(0, s.recvElems(n) * s.dtype().size());
  }

  /** Frees the buffers (a buffer still held by a failed collective is left to the GC). */
  void close() {
    RankHarness.closeBuffer(send);
    if (recv != send) {
      RankHarness.closeBuffer(recv);
    }
  }

  private static ByteBuffer read(DeviceBuffer b) {
    ByteBuffer out = Reference.heap((int) b.byteSize());
    b.copyToHost(0, out);
    return out;
  }

  private static ByteBuffer native_(ByteBuffer b) {
    return b.order(ByteOrder.nativeOrder());
  }

  private static void same(
      StringBuilder p, String what, ByteBuffer got, ByteBuffer want, int off, int len) {
    sameAt(p, what, got, off, want, off, len);
  }

  private static void sameAt(
      StringBuilder p,
      String what,
      ByteBuffer got,
      int gotOff,
      ByteBuffer want,
      int wantOff,
      int len) {
    int at = got.slice(gotOff, len).mismatch(want.slice(wantOff, len));
    if (at >= 0) {
      p.append(' ').append(what).append(" (first at byte ").append(gotOff + at).append(");");
    }
  }
}
