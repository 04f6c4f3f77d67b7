package org.sparkccl.comm;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Supplier;
import org.sparkccl.DataType;
import org.sparkccl.config.Algorithm;
import org.sparkccl.kernel.HostOperands;
import org.sparkccl.kernel.PeerEdge;

/**
 * A tree, recursive doubling or Rabenseifner launch kept for later launches of the same shape: the
 * kernel's work, its edges in the order the launch made them, and the task that runs it. A training
 * loop calls the same small allReduce again and again; building the edges, exchanges and task anew
 * for each call allocated about a kilobyte per rank, and fresh memory costs a cache miss per line
 * (8 B allReduce, 4 rank processes on a 16-core host: 2.2 to 2.7 us with a 4 MB young generation,
 * 3.1 to 4.3 with the default one, docs/benchmarks.md).
 *
 * <p>A later launch re-arms every edge in the order they were made, since each arming takes the
 * link's next steps and queues its proxy operations in order. It may do so only once the collective
 * that last used the plan has completed ({@link #reusable}): its kernel no longer touches the edges
 * and its task has left the kernel thread's queue. Used under the launch lock only.
 */
final class PeerPlan {
  private final Algorithm algo;
  private final CollectiveCall.Kind kind;
  private final int root;
  private final long count;
  private final DataType dtype;

  /** What the launch works on; set for each launch. */
  final HostOperands operands = new HostOperands();

  private PeerEdge[] edges = new PeerEdge[4];
  private boolean[] sends = new boolean[4];
  private long[] bytes = new long[4];
  private int size;

  /**
   * A reduceScatter's working memory for its rounds before the last (on the heap: a plan replaced
   * while its collective runs cannot free anything, and nothing else owns it), or null.
   */
  ByteBuffer scratch;

  /** Runs the kernel; made once the work is planned. */
  ChannelTask task;

  /** The collective that used this plan last; null before the first. */
  private Collective last;

  /** Names the collective in progress for an error: made once, read only when a wait fails. */
  final Supplier<String> what = this::what;

  private final int rank;

  PeerPlan(int rank, Algorithm algo, CollectiveCall call) {
    this.rank = rank;
    this.algo = algo;
    this.kind = call.kind();
    this.root = call.root();
    this.count = call.count();
    this.dtype = call.dtype();
  }

  /** Whether this plan describes {@code call} under {@code algo}. */
  boolean matches(Algorithm algo, CollectiveCall call) {
    return this.algo == algo
        && kind == call.kind()
        && root == call.root()
        && count == call.count()
        && dtype == call.dtype();
  }

  private String what() {
    return "rank " + rank + ": " + last.what() + " (" + algo.name().toLowerCase(Locale.ROOT) + ")";
  }

  /** Whether a launch may re-arm it: the collective that used it last has completed. */
  boolean reusable() {
    return last == null || last.future.isDone();
  }

  /** The plan is used by {@code coll} now. */
  void usedBy(Collective coll) {
    last = coll;
  }

  /**
   * Records an edge as the launch made it: it sends ({@code send}) or receives {@code edgeBytes}.
   */
  void add(PeerEdge edge, boolean send, long edgeBytes) {
    if (size == edges.length) {
      edges = Arrays.copyOf(edges, size * 2);
      sends = Arrays.copyOf(sends, size * 2);
      bytes = Arrays.copyOf(bytes, size * 2);
    }
    edges[size] = edge;
    sends[size] = send;
    bytes[size] = edgeBytes;
    size++;
  }

  int edges() {
    return size;
  }

  PeerEdge edge(int i) {
    return edges[i];
  }

  boolean sends(int i) {
    return sends[i];
  }

  long bytes(int i) {
    return bytes[i];
  }
}
