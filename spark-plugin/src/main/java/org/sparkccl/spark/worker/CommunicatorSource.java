package org.sparkccl.spark.worker;

import java.time.Duration;
import org.sparkccl.Communicator;

/**
 * Forms the communicator of a running barrier task on behalf of that task's Python worker; the
 * executor plugin's implementation looks the task up by its attempt id and joins the stage's
 * rendezvous, as a Java task does.
 *
 * <pre>{@code
 * CommunicatorSource source =
 *     (attemptId, timeout, onTaskEnd) -> SparkCCL.communicator(context, timeout);
 * }</pre>
 */
@FunctionalInterface
public interface CommunicatorSource {
  /**
   * The communicator of task attempt {@code taskAttemptId}, on host memory.
   *
   * @param timeout the collective timeout, or {@code null} for the executor's
   * @param onTaskEnd run when the task ends (the communicator is then closed by the task)
   * @throws IllegalArgumentException when that attempt is not a running barrier task here
   */
  Communicator open(long taskAttemptId, Duration timeout, Runnable onTaskEnd);
}
