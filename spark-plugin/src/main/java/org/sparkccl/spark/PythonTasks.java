package org.sparkccl.spark;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.TaskContext;
import org.apache.spark.util.TaskCompletionListener;
import org.sparkccl.Communicator;
import org.sparkccl.spark.worker.CommunicatorSource;

/**
 * The barrier tasks running in this executor, by attempt id, so that a task's Python worker can
 * form the task's communicator through the executor's engine and the driver's rendezvous ({@code
 * sparkccl.communicator()}), exactly as a Java task does with {@link SparkCCL#communicator}.
 */
final class PythonTasks implements CommunicatorSource {
  static final PythonTasks INSTANCE = new PythonTasks();

  private final Map<Long, BarrierTaskContext> running = new ConcurrentHashMap<>();

  private PythonTasks() {}

  /** Called by the executor plugin as each task starts, on the task's thread. */
  void taskStarted() {
    if (TaskContext.get() instanceof BarrierTaskContext barrier) {
      long attempt = barrier.taskAttemptId();
      running.put(attempt, barrier);
      TaskCompletionListener forget = ctx -> running.remove(attempt);
      barrier.addTaskCompletionListener(forget);
    }
  }

  @Override
  public Communicator open(long taskAttemptId, Duration timeout, Runnable onTaskEnd) {
    BarrierTaskContext context = running.get(taskAttemptId);
    if (context == null) {
      throw new IllegalArgumentException(
          "task attempt "
              + taskAttemptId
              + " is not a running barrier task of this executor: call sparkccl.communicator()"
              + " inside rdd.barrier().mapPartitions(fn) or df.mapInPandas(fn, barrier=True)");
    }
    Communicator comm = SparkCCL.hostCommunicator(context, timeout);
    TaskCompletionListener ended = ctx -> onTaskEnd.run();
    context.addTaskCompletionListener(ended);
    return comm;
  }

  /** Barrier tasks running now; for tests and leak checks. */
  int size() {
    return running.size();
  }
}
