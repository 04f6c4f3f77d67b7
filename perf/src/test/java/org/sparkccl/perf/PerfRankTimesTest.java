package org.sparkccl.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code --rank-times}: rank 0 prints every rank's own time a call above the row, and the row's
 * time is the slowest of them.
 */
@DisplayName("the perf tool's time a call by rank")
class PerfRankTimesTest {
  private static final String PREFIX = "#   time a call by rank (us):";

  @Test
  void rowTimeIsTheSlowestRanksTime() throws Exception {
    int ranks = 3;
    PerfToolRun run =
        PerfToolRun.hostThreads(
            120,
            ranks,
            "-o",
            "broadcast",
            "-b",
            "8",
            "-e",
            "8",
            "-w",
            "5",
            "-i",
            "200",
            "--warmup-ms",
            "0",
            "--rank-times");
    String output = run.output();
    assertEquals(0, run.exitCode(), output);

    String ranksLine = null;
    String row = null;
    for (String line : output.split("\n")) {
      if (line.startsWith(PREFIX)) {
        ranksLine = line;
      } else if (line.trim().startsWith("8 ") && line.contains("float32")) {
        row = line.trim();
      }
    }
    assertNotNull(ranksLine, "no line starting with '" + PREFIX + "' in: " + output);
    assertNotNull(row, "no row for 8 bytes in: " + output);

    List<Double> times = new ArrayList<>();
    String[] entries = ranksLine.substring(PREFIX.length()).trim().split(" ");
    for (int r = 0; r < entries.length; r++) {
      String[] rankAndTime = entries[r].split(":");
      assertEquals("" + r, rankAndTime[0], "entries in rank order: " + ranksLine);
      times.add(Double.parseDouble(rankAndTime[1]));
    }
    assertEquals(ranks, times.size(), ranksLine);
    assertTrue(times.stream().allMatch(t -> t > 0), ranksLine);
    double slowest = times.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
    String rowTime = row.split("\\s+")[5];
    assertEquals(String.format(Locale.ROOT, "%.2f", slowest), rowTime, row + " / " + ranksLine);
  }
}
