package org.sparkccl.perf;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;

/**
 * The spread of one size's timed calls ({@code --call-times}). A size whose mean is ten times its
 * neighbours' is either every call slower (the machine's state while it ran) or a few calls far
 * slower (one long wait: a pause of the JVM, a thread that lost its core); the median against the
 * slowest calls tells them apart, and the JVM's uptime at the start places the size in a log.
 */
final class CallTimes {
  private CallTimes() {}

  /**
   * One comment line: the number of calls, their median, 90th and 99th percentile, the slowest call
   * and its index, the share of the total the slowest 1% of calls took, and the JVM uptime when the
   * first call began.
   *
   * @param start {@link System#nanoTime} before the first call
   * @param ends {@link System#nanoTime} after each call
   */
  static String describe(long start, long[] ends) {
    int n = ends.length;
    double[] us = new double[n];
    long previous = start;
    int slowest = 0;
    for (int i = 0; i < n; i++) {
      us[i] = (ends[i] - previous) / 1e3;
      previous = ends[i];
      if (us[i] > us[slowest]) {
        slowest = i;
      }
    }
    double total = (ends[n - 1] - start) / 1e3;
    double[] sorted = us.clone();
    Arrays.sort(sorted);
    int top = Math.max(1, n / 100);
    double topSum = 0;
    for (int i = n - top; i < n; i++) {
      topSum += sorted[i];
    }
    long uptimeMs =
        ManagementFactory.getRuntimeMXBean().getUptime()
            - Math.round((System.nanoTime() - start) / 1e6);
    return String.format(
        Locale.ROOT,
        "#   %d calls on rank 0: median %.2f p90 %.2f p99 %.2f slowest %.2f us (call %d);"
            + " the slowest %d hold %.0f%% of %.0f us; began at JVM uptime %d ms",
        n,
        sorted[n / 2],
        sorted[Math.min(n - 1, (int) (n * 0.9))],
        sorted[Math.min(n - 1, (int) (n * 0.99))],
        us[slowest],
        slowest,
        top,
        100 * topSum / total,
        total,
        uptimeMs);
  }
}
