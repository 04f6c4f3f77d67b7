package org.sparkccl.comm;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Process-wide counters of the engine, for metrics systems (the Spark plugin publishes them as
 * gauges): collectives completed and failed, bytes, the last collective's bandwidth and the mean
 * latency per kind. Updating costs a few adds per collective.
 */
public final class EngineStats {
  private static final LongAdder COMPLETED = new LongAdder();
  private static final LongAdder FAILED = new LongAdder();
  private static final LongAdder BYTES = new LongAdder();

  /**
   * Per kind, indexed by {@link CollectiveCall.Kind#ordinal()}, and last for groups of sends and
   * receives: the label, collectives completed and their nanoseconds. Arrays, not a map keyed by
   * label: recording then looks nothing up.
   */
  private static final String[] LABELS = labels();

  private static final LongAdder[] COUNT = adders();
  private static final LongAdder[] NANOS = adders();

  /**
   * Both bandwidths of the last collective, written and read together under this lock so readers
   * never mix two collectives' (an uncontended lock; an object per collective would allocate, and
   * two floats in one word lost the precision that busbw = algbw x 2(n-1)/n needs).
   */
  private static final Object LAST = new Object();

  private static double lastAlgBw;
  private static double lastBusBw;

  private EngineStats() {}

  private static String[] labels() {
    CollectiveCall.Kind[] kinds = CollectiveCall.Kind.values();
    String[] l = new String[kinds.length + 1];
    for (CollectiveCall.Kind k : kinds) {
      l[k.ordinal()] = k.label();
    }
    l[kinds.length] = "sendRecv";
    return l;
  }

  private static LongAdder[] adders() {
    LongAdder[] a = new LongAdder[LABELS.length];
    for (int i = 0; i < a.length; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  /**
   * Records one finished collective of {@code nRanks} ranks ({@code call} null for a group of sends
   * and receives).
   */
  static void record(CollectiveCall call, int nRanks, long nanos, boolean ok) {
    if (!ok) {
      FAILED.increment();
      return;
    }
    COMPLETED.increment();
    int kind = call == null ? LABELS.length - 1 : call.kind().ordinal();
    COUNT[kind].increment();
    NANOS[kind].add(nanos);
    if (call != null) {
      long bytes = call.count() * call.dtype().size();
      BYTES.add(bytes);
      double alg = nanos > 0 ? (double) bytes / nanos : 0;
      double bus = nanos > 0 ? busBytes(call, nRanks) / nanos : 0;
      synchronized (LAST) {
        lastAlgBw = alg;
        lastBusBw = bus;
      }
    }
  }

  public static long collectivesCompleted() {
    return COMPLETED.sum();
  }

  public static long collectivesFailed() {
    return FAILED.sum();
  }

  /** Bytes of user data (count x dtype size) of completed collectives. */
  public static long bytes() {
    return BYTES.sum();
  }

  /** The last completed collective's algorithm bandwidth (bytes / time), in GB/s. */
  public static double lastAlgBwGBps() {
    synchronized (LAST) {
      return lastAlgBw;
    }
  }

  /**
   * The last completed collective's bus bandwidth in GB/s, as nccl-tests defines it: allReduce
   * moves 2(n-1)/n of its buffer per rank, allGather and reduceScatter (n-1)/n of the whole
   * gathered buffer, broadcast and reduce the buffer once.
   */
  public static double lastBusBwGBps() {
    synchronized (LAST) {
      return lastBusBw;
    }
  }

  private static double busBytes(CollectiveCall call, int n) {
    double bytes = (double) call.count() * call.dtype().size();
    if (n < 2) {
      return bytes;
    }
    return switch (call.kind()) {
      case ALL_REDUCE -> bytes * 2 * (n - 1) / n;
      case ALL_GATHER, REDUCE_SCATTER -> bytes * (n - 1); // (n-1)/n of the n-block buffer
      default -> bytes;
    };
  }

  /** Mean latency per kind ({@code allReduce}, ...), in microseconds. */
  public static Map<String, Double> meanLatencyUs() {
    Map<String, Double> m = new TreeMap<>();
    for (int k = 0; k < LABELS.length; k++) {
      long n = COUNT[k].sum();
      if (n > 0) {
        m.put(LABELS[k], NANOS[k].sum() / 1e3 / n);
      }
    }
    return m;
  }

  /** The kinds of collective seen so far. */
  public static Iterable<String> kinds() {
    return meanLatencyUs().keySet();
  }
}
