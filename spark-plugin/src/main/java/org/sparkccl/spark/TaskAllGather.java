package org.sparkccl.spark;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.util.TaskCompletionListener;
import org.sparkccl.CclTimeoutException;

/**
 * The all-gathers of a barrier task: through the driver plugin's {@link Rendezvous} when the plugin
 * is enabled (milliseconds), else through {@code BarrierTaskContext.allGather} (a second or more
 * per call, by Spark's polling). Every task of the stage makes the same sequence of calls, so the
 * n-th call of each task meets the n-th call of the others.
 */
final class TaskAllGather {
  /** Calls made so far by each running task, keyed by task attempt id. */
  private static final Map<Long, AtomicInteger> CALLS = new ConcurrentHashMap<>();

  private TaskAllGather() {}

  static byte[][] allGather(BarrierTaskContext context, byte[] mine, Duration timeout) {
    PluginContext plugin = ExecutorEngine.get().pluginContext();
    if (plugin == null) {
      String[] all = context.allGather(Base64.getEncoder().encodeToString(mine));
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
