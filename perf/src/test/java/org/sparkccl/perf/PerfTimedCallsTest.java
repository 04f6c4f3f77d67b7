package org.sparkccl.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code --timed-ms}: a size whose {@code -i} calls take less than that time gets as many calls as
 * fill it at the warm-up's rate; without it the tool makes exactly {@code -i}. The count comes from
 * {@code --call-times}, which prints how many calls rank 0 timed.
 */
@DisplayName("the perf tool's timed calls by time")
class PerfTimedCallsTest {
  private static final Pattern CALLS = Pattern.compile("^#   (\\d+) calls on rank 0: ");
  private static final int ITERS = 10;

  @Test
  void timedMsMakesMoreCallsThanItersWhereTheyWouldBeQuick() throws Exception {
    // a small broadcast takes well under a millisecond once warm, so 10 of them far less than 300
    // ms; the count itself depends on the machine (the helper's arithmetic is checked below)
    List<Integer> counts = calls(300);
    assertEquals(2, counts.size(), "two sizes: " + counts);
    for (int n : counts) {
      assertTrue(n > ITERS, "--timed-ms 300 timed only " + n + " calls: " + counts);
    }
  }

  @Test
  void withoutTimedMsEachSizeMakesExactlyIters() throws Exception {
    assertEquals(List.of(ITERS, ITERS), calls(0));
  }

  @Test
  void theHelperFillsTheTimeAtTheRateAndKeepsItersAsAFloor() {
    PerfOptions o = new PerfOptions();
    o.iters = 50;
    o.timedMs = 100;
    assertEquals(10_000, PerfRank.timedCalls(o, 0.01), "100 ms at 10 us a call");
    assertEquals(50, PerfRank.timedCalls(o, 5.0), "100 ms at 5 ms a call is fewer than -i");
    assertEquals(PerfRank.MAX_TIMED_CALLS, PerfRank.timedCalls(o, 1e-9), "bounded");
    assertEquals(50, PerfRank.timedCalls(o, Double.NaN), "no rate: -i");
    o.timedMs = 0;
    assertEquals(50, PerfRank.timedCalls(o, 0.01), "off: -i");
  }

  /** Rank 0's timed calls for each row of a 2-rank run of 8 and 16 B broadcasts. */
  private static List<Integer> calls(int timedMs) throws Exception {
    PerfToolRun run =
        PerfToolRun.hostThreads(
            120,
            2,
            "-o",
            "broadcast",
            "-b",
            "8",
            "-e",
            "16",
            "-f",
            "2",
            "-w",
            "20",
            "-i",
            "" + ITERS,
            "--warmup-ms",
            "50",
            "--timed-ms",
            "" + timedMs,
            "--call-times");
    String output = run.output();
    assertEquals(0, run.exitCode(), output);
    List<Integer> counts = new ArrayList<>();
    for (String line : output.split("\n")) {
      Matcher m = CALLS.matcher(line);
      if (m.find()) {
        counts.add(Integer.parseInt(m.group(1)));
      }
    }
    return counts;
  }
}
