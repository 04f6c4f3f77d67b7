package org.sparkccl.bootstrap;

import java.time.Duration;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.sparkccl.CclException;
import org.sparkccl.CclTimeoutException;

/**
 * Ranks as threads of one JVM: a shared table and a barrier.
 *
 * <pre>{@code
 * LocalBootstrap.Group group = LocalBootstrap.group(4);
 * // on thread r:
 * Communicator comm = Communicator.create(group.rank(r), config);
 * }</pre>
 */
public final class LocalBootstrap implements Bootstrap {
  private final Group group;
  private final int rank;

  private LocalBootstrap(Group group, int rank) {
    this.group = group;
    this.rank = rank;
  }

  public static Group group(int nRanks) {
    if (nRanks < 1) {
      throw new IllegalArgumentException("nRanks=" + nRanks + " must be at least 1");
    }
    return new Group(nRanks);
  }

  /** The ranks of one communicator. */
  public static final class Group {
    private final byte[][] table;
    private final CyclicBarrier arrived;
    private final CyclicBarrier copied;

    /** Why a rank gave up ({@link #abort}), or null; once set, every wait fails at once. */
    private final AtomicReference<String> abandoned = new AtomicReference<>();

    private Group(int nRanks) {
      table = new byte[nRanks][];
      arrived = new CyclicBarrier(nRanks);
      copied = new CyclicBarrier(nRanks);
    }

    public LocalBootstrap rank(int rank) {
      if (rank < 0 || rank >= table.length) {
        throw new IllegalArgumentException(
            "rank=" + rank + " is out of range; expected 0.." + (table.length - 1));
      }
      return new LocalBootstrap(this, rank);
    }

    /**
     * Tells the group that a rank gave up ({@code why}: which rank and what happened): every rank
     * waiting in an {@link #allGather} fails at once, and so does every later one, instead of
     * waiting out its timeout for a rank that will never arrive. For a rank thread that dies
     * outside the engine (an {@code OutOfMemoryError} in its own code, say). The first reason
     * stays.
     *
     * <pre>{@code
     * try {
     *   runRank(group.rank(r));
     * } catch (RuntimeException | OutOfMemoryError e) {
     *   group.abort("rank " + r + " failed: " + e);
     *   throw e;
     * }
     * }</pre>
     */
    public void abort(String why) {
      abandoned.compareAndSet(null, why);
      arrived.reset(); // breaks the barrier under the ranks waiting there
      copied.reset();
    }
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int nRanks() {
    return group.table.length;
  }

  @Override
  public byte[][] allGather(byte[] mine, Duration timeout) {
    group.table[rank] = mine.clone();
    await(group.arrived, timeout);
    byte[][] all = new byte[nRanks()][];
    for (int r = 0; r < all.length; r++) {
      all[r] = group.table[r].clone();
    }
    await(group.copied, timeout);
    return all;
  }

  private void await(CyclicBarrier barrier, Duration timeout) {
    checkAbandoned();
    try {
      barrier.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new CclTimeoutException(
          "rank " + rank + ": bootstrap allGather: not every rank arrived within " + timeout);
    } catch (BrokenBarrierException e) {
      checkAbandoned();
      throw new CclException("rank " + rank + ": bootstrap allGather: another rank gave up");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CclException("rank " + rank + ": bootstrap allGather interrupted");
    }
  }

  private void checkAbandoned() {
    String why = group.abandoned.get();
    if (why != null) {
      throw new CclException("rank " + rank + ": bootstrap allGather: " + why);
    }
  }

  @Override
  public String localHost() {
    return "127.0.0.1";
  }
}
