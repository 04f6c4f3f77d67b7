package org.sparkccl.spark;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.util.TaskCompletionListener;
import org.sparkccl.CclTimeoutException;

/**
 * The all-gathers of a barrier task: through the driver plugin's {@link Rendezvous} when the plugin
 * is enabled (milliseconds), else through {@code BarrierTaskContext.allGather} (a second or more
 * per call, by Spark's polling). Both are bounded by the caller's timeout. Every task of the stage
 * makes the same sequence of calls, so the n-th call of each task meets the n-th call of the
 * others.
 */
final class TaskAllGather {
  /** Calls made so far by each running task, keyed by task attempt id. */
  private static final Map<Long, AtomicInteger> CALLS = new ConcurrentHashMap<>();

  private TaskAllGather() {}

  static byte[][] allGather(BarrierTaskContext context, byte[] mine, Duration timeout) {
    PluginContext plugin = ExecutorEngine.get().pluginContext();
    if (plugin == null) {
      String[] all = sparkAllGather(context, Base64.getEncoder().encodeToString(mine), timeout);
      byte[][] out = new byte[all.length][];
      for (int r = 0; r < all.length; r++) {
        out[r] = Base64.getDecoder().decode(all[r].getBytes(StandardCharsets.US_ASCII));
      }
      return out;
    }
    String key = context.stageId() + "." + context.stageAttemptNumber() + "#" + nextCall(context);
    Rendezvous.Post post =
        new Rendezvous.Post(key, context.partitionId(), context.numPartitions(), mine);
    long deadline = System.nanoTime() + timeout.toNanos();
    long pauseMs = 1;
    while (true) {
      Rendezvous.Reply reply = Rendezvous.Reply.decode(askDriver(plugin, post.encode()));
      if (reply.all() != null) {
        return reply.all();
      }
      context.killTaskIfInterrupted();
      if (System.nanoTime() > deadline) {
        throw new CclTimeoutException(
            "rank "
                + context.partitionId()
                + ": the barrier stage's ranks "
                + reply.missing()
                + " did not reach rendezvous "
                + key
                + " within "
                + timeout.toMillis()
                + " ms");
      }
      // each round trip is an RPC to the driver: back off from 1 ms to 32 ms between them
      try {
        Thread.sleep(pauseMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        context.killTaskIfInterrupted();
        throw new IllegalStateException("interrupted while waiting for rendezvous " + key, e);
      }
      pauseMs = Math.min(32, pauseMs * 2);
    }
  }

  /**
   * {@code BarrierTaskContext.allGather}, which only {@code spark.barrier.sync.timeout} bounds (a
   * year by default), bounded by {@code timeout}: the call runs on a daemon thread while the task
   * waits. When the timeout passes the task fails, and so the stage; Spark's call is left to end
   * with the stage's barrier or the executor (a sleeping thread, polling once a second).
   */
  static String[] sparkAllGather(BarrierTaskContext context, String mine, Duration timeout) {
    CompletableFuture<String[]> call = new CompletableFuture<>();
    Thread caller =
        new Thread(
            () -> {
              try {
                call.complete(context.allGather(mine));
              } catch (Throwable e) {
                call.completeExceptionally(e);
              }
            },
            "sparkccl-barrier-allgather-" + context.taskAttemptId());
    caller.setDaemon(true);
    caller.start();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        return call.get(
            Math.max(1, Math.min(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))),
            TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        context.killTaskIfInterrupted();
        if (System.nanoTime() - deadline >= 0) {
          throw new CclTimeoutException(
              "rank "
                  + context.partitionId()
                  + ": BarrierTaskContext.allGather did not complete within "
                  + timeout.toMillis()
                  + " ms (some task of the barrier stage did not reach it; with"
                  + " spark.plugins=org.sparkccl.spark.SparkCCLPlugin the rendezvous is faster)");
        }
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof RuntimeException r) {
          throw r;
        }
        throw new IllegalStateException("BarrierTaskContext.allGather failed: " + cause, cause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        context.killTaskIfInterrupted();
        throw new IllegalStateException("interrupted in BarrierTaskContext.allGather", e);
      }
    }
  }

  private static byte[] askDriver(PluginContext plugin, byte[] post) {
    try {
      return (byte[]) plugin.ask(post);
    } catch (Exception e) {
      throw new IllegalStateException("SparkCCL rendezvous through the driver failed: " + e, e);
    }
  }

  private static int nextCall(BarrierTaskContext context) {
    long attempt = context.taskAttemptId();
    AtomicInteger calls =
        CALLS.computeIfAbsent(
            attempt,
            id -> {
              TaskCompletionListener forget = ctx -> CALLS.remove(id);
              context.addTaskCompletionListener(forget);
              return new AtomicInteger();
            });
    return calls.getAndIncrement();
  }
}
