package org.sparkccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;

/**
 * Test-only helpers: ranks as threads of this JVM (each rank a lambda, all under one deadline,
 * failures collected per rank), and one allReduce driven over every rank of a set of communicators
 * through the asynchronous API, checked against {@link Reference}.
 */
public final class RankHarness {
  private RankHarness() {}

  /** The body of one rank. */
  @FunctionalInterface
  public interface RankBody {
    void run(int rank) throws Exception;
  }

  /**
   * Creates each rank's communicator on a thread of its own ({@code create.apply(r)}, which may
   * give ranks different bootstraps or settings) into {@code comms}; the caller closes them.
   *
   * @return per rank, what its creation threw, or null
   */
  public static Throwable[] createEach(
      Communicator[] comms,
      Duration deadline,
      java.util.function.IntFunction<Communicator> create) {
    return runCollect(comms.length, deadline, r -> comms[r] = create.apply(r));
  }

  /**
   * Runs {@code body} for ranks {@code 0..n-1} on threads named {@code rank-<r>} and waits for all
   * of them, at most {@code deadline}.
   *
   * @return per rank, what it threw, or null
   * @throws AssertionError when a rank is still running at the deadline (with its stack)
   */
  public static Throwable[] runCollect(int n, Duration deadline, RankBody body) {
    Throwable[] errors = new Throwable[n];
    Thread[] threads = new Thread[n];
    for (int r = 0; r < n; r++) {
      int rank = r;
      threads[r] =
          new Thread(
              () -> {
                try {
                  body.run(rank);
                } catch (Throwable t) {
                  errors[rank] = t;
                }
              },
              "rank-" + r);
      threads[r].setDaemon(true);
      threads[r].start();
    }
    long end = System.nanoTime() + deadline.toNanos();
    StringBuilder stuck = new StringBuilder();
    for (Thread t : threads) {
      try {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for the ranks", e);
      }
      if (t.isAlive()) {
        stuck.append("\n  ").append(t.getName()).append(" still running:");
        for (StackTraceElement s : t.getStackTrace()) {
          stuck.append("\n    at ").append(s);
        }
      }
    }
    if (stuck.length() > 0) {
      for (Thread t : threads) {
        t.interrupt();
      }
      throw new AssertionError("ranks did not finish within " + deadline + ":" + stuck);
    }
    return errors;
  }

  /** {@link #runCollect}, failing with every rank's error when any rank threw. */
  public static void run(int n, Duration deadline, RankBody body) {
    assertNoErrors(runCollect(n, deadline, body), "");
  }

  /**
   * Fails when any rank threw, naming every failed rank and its error (a rank's own error, such as
   * a NullPointerException, is often the cause of its peers' "connection closed").
   */
  public static void assertNoErrors(Throwable[] errors, String what) {
    StringBuilder msg = new StringBuilder();
    Throwable first = null;
    for (int r = 0; r < errors.length; r++) {
      if (errors[r] != null) {
        msg.append("\n  rank ").append(r).append(" failed: ").append(errors[r]);
        // the cause shown is a rank's own error in preference to a peer's CclException
        if (first == null
            || (first instanceof CclException && !(errors[r] instanceof CclException))) {
          first = errors[r];
        }
      }
    }
    if (first != null) {
      AssertionError failure = new AssertionError(what + msg, first);
      for (Throwable e : errors) {
        if (e != null && e != first) {
          failure.addSuppressed(e);
        }
      }
      throw failure;
    }
  }

  /** Creates the {@code n} communicators of one group, one rank per thread. */
  public static Communicator[] createAll(int n, CclConfig config, Duration deadline) {
    LocalBootstrap.Group group = LocalBootstrap.group(n);
    Communicator[] comms = new Communicator[n];
    Throwable[] errors;
    try {
      errors = runCollect(n, deadline, r -> comms[r] = Communicator.create(group.rank(r), config));
    } catch (AssertionError e) {
      closeQuietly(comms);
      throw e;
    }
    for (int r = 0; r < n; r++) {
      if (errors[r] != null) {
        closeQuietly(comms);
        throw new AssertionError(
            "creating rank " + r + " of " + n + " with " + config + " failed: " + errors[r],
            errors[r]);
      }
    }
    return comms;
  }

  /**
   * Runs {@code body}, then closes {@code comms}: strictly ({@link #closeAll}, so a close that
   * throws or hangs fails the test) after a body that passed, quietly after one that failed, so the
   * body's own failure is the one reported.
   */
  public static void closingAfter(Communicator[] comms, Duration deadline, Runnable body) {
    boolean ok = false;
    try {
      body.run();
      ok = true;
    } finally {
      if (ok) {
        closeAll(comms, deadline);
      } else {
        closeQuietly(comms);
      }
    }
  }

  /** Closes every communicator in parallel; fails if a close throws or hangs. */
  public static void closeAll(Communicator[] comms, Duration deadline) {
    run(
        comms.length,
        deadline,
        r -> {
          if (comms[r] != null) {
            comms[r].close();
          }
        });
  }

  /** Aborts, then closes, ignoring errors: cleanup after a failure already reported. */
  public static void closeQuietly(Communicator[] comms) {
    for (Communicator c : comms) {
      if (c != null) {
        try {
          c.abort();
        } catch (RuntimeException ignored) {
          // reported elsewhere
        }
      }
    }
    try {
      closeAll(comms, Duration.ofSeconds(60));
    } catch (AssertionError ignored) {
      // reported elsewhere
    }
  }

  /**
   * Waits for {@code f} at most {@code timeout}.
   *
   * @return what it failed with, or null when it completed normally
   * @throws AssertionError when it is not done by then
   */
  public static Throwable await(CompletableFuture<?> f, Duration timeout, String what) {
    try {
      f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (TimeoutException e) {
      throw new AssertionError(what + ": not done within " + timeout + " (hang?)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(what + ": interrupted", e);
    }
  }

  /** Closes a buffer; a buffer still held by a failed collective is left to the GC. */
  public static void closeBuffer(DeviceBuffer b) {
    if (b != null && !b.isClosed()) {
      try {
        b.close();
      } catch (IllegalStateException ignored) {
        // still retained by a collective that failed; nothing more to do in a test
      }
    }
  }

  /**
   * On one rank's own thread: runs an in-place allReduce of this rank's {@code inputs[rank]} and
   * checks the result against {@link Reference} over every rank's input. Closes the communicator
   * before the buffer goes when the collective fails, so no kernel touches freed memory.
   *
   * @return null when the result matches, otherwise a description of what is wrong
   */
  public static String allReduceInPlaceOnRank(
      Communicator comm, int rank, ByteBuffer[] inputs, int count, DataType t, ReduceOp op) {
    try (DeviceBuffer buf = comm.device().allocate((long) count * t.size())) {
      buf.copyFromHost(inputs[rank].duplicate().order(ByteOrder.nativeOrder()), 0);
      try {
        comm.allReduce(buf, buf, count, t, op);
      } catch (RuntimeException e) {
        comm.close(); // stop the kernels before the buffer is freed
        throw e;
      }
      ByteBuffer got = Reference.heap(count * t.size());
      buf.copyToHost(0, got);
      return Reference.allReduce(inputs, count, t, op).mismatches(got);
    }
  }

  /** Bytes after the {@code count} elements that must stay untouched. */
  static final int PAD = 64;

  /**
   * Runs one allReduce on every rank of {@code comms} (launched with {@code allReduceAsync} from
   * this thread, in rank order) and checks it: rank 0's result against {@link Reference}, every
   * other rank's result byte-for-byte against rank 0's, the {@link #PAD} bytes after the result
   * untouched, and an out-of-place send buffer unchanged.
   *
   * @return null when everything matches, otherwise a description of what is wrong
   * @throws AssertionError when the collective fails or does not finish within {@code wait}
   */
  public static String allReduceAndCheck(
      Communicator[] comms,
      int count,
      DataType t,
      ReduceOp op,
      boolean inPlace,
      long seed,
      Duration wait) {
    int n = comms.length;
    int bytes = count * t.size();
    SplittableRandom rnd = new SplittableRandom(seed);
    ByteBuffer[] inputs = new ByteBuffer[n];
    ByteBuffer[] recvBefore = new ByteBuffer[n];
    DeviceBuffer[] send = new DeviceBuffer[n];
    DeviceBuffer[] recv = new DeviceBuffer[n];
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    try {
      for (int r = 0; r < n; r++) {
        inputs[r] = Reference.heap(bytes + PAD);
        Reference.fill(inputs[r], count, t, rnd, op == ReduceOp.PROD);
        Reference.fillBytes(inputs[r], bytes, bytes + PAD, rnd);
        send[r] = comms[r].device().allocate(bytes + PAD);
        send[r].copyFromHost(inputs[r].duplicate().clear().order(ByteOrder.nativeOrder()), 0);
        if (inPlace) {
          recv[r] = send[r];
          recvBefore[r] = inputs[r];
        } else {
          recvBefore[r] = Reference.heap(bytes + PAD);
          Reference.fillBytes(recvBefore[r], 0, bytes + PAD, rnd);
          recv[r] = comms[r].device().allocate(bytes + PAD);
          recv[r].copyFromHost(recvBefore[r].duplicate().clear().order(ByteOrder.nativeOrder()), 0);
        }
      }
      for (int r = 0; r < n; r++) {
        futures.add(comms[r].allReduceAsync(send[r], recv[r], count, t, op));
      }
      long end = System.nanoTime() + wait.toNanos();
      for (int r = 0; r < n; r++) {
        Throwable e =
            await(
                futures.get(r),
                Duration.ofNanos(Math.max(1, end - System.nanoTime())),
                "rank " + r);
        if (e != null) {
          throw new AssertionError("rank " + r + " failed: " + e, e);
        }
      }
      Reference.Expected expected = Reference.allReduce(inputs, count, t, op);
      ByteBuffer first = null;
      StringBuilder problems = new StringBuilder();
      for (int r = 0; r < n; r++) {
        ByteBuffer got = Reference.heap(bytes + PAD);
        recv[r].copyToHost(0, got);
        if (r == 0) {
          first = got;
          String m = expected.mismatches(got);
          if (m != null) {
            problems.append(" rank 0: ").append(m).append(';');
          }
        } else if (got.slice(0, bytes).mismatch(first.slice(0, bytes)) >= 0) {
          int at = got.slice(0, bytes).mismatch(first.slice(0, bytes));
          problems
              .append(" rank ")
              .append(r)
              .append(" differs from rank 0 at byte ")
              .append(at)
              .append(';');
        }
        if (got.slice(bytes, PAD).mismatch(recvBefore[r].slice(bytes, PAD)) >= 0) {
          problems.append(" rank ").append(r).append(": bytes after count were overwritten;");
        }
        if (!inPlace) {
          ByteBuffer sent = Reference.heap(bytes + PAD);
          send[r].copyToHost(0, sent);
          if (sent.mismatch(inputs[r].duplicate().clear()) >= 0) {
            problems.append(" rank ").append(r).append(": the send buffer was modified;");
          }
        }
      }
      return problems.length() == 0 ? null : problems.toString();
    } catch (RuntimeException | AssertionError e) {
      // stop every kernel before the buffers below are freed: a failed collective's future may
      // complete while a kernel still touches them
      closeQuietly(comms);
      throw e;
    } finally {
      for (int r = 0; r < n; r++) {
        closeBuffer(send[r]);
        if (!inPlace) {
          closeBuffer(recv[r]);
        }
      }
    }
  }
}
