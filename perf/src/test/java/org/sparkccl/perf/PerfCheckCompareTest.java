package org.sparkccl.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code --check-compare}: the mismatch check off and on in the same rank processes, one block of
 * rows each, each row the median of its interleaved rounds, and results still checked.
 */
@DisplayName("the perf tool's comparison of the mismatch check off and on")
class PerfCheckCompareTest {
  private static final String ROUNDS = " rounds, us a call: [";

  @Test
  void printsBothSettingsWithTheMedianRound() throws Exception {
    int rounds = 5;
    PerfToolRun run =
        PerfToolRun.of(
            180,
            "--device",
            "host",
            "-n",
            "3",
            "-t",
            "socket",
            "-o",
            "reduce",
            "--root",
            "1",
            "-b",
            "8",
            "-e",
            "8",
            "-w",
            "5",
            "-i",
            "100",
            "--jit-warmup",
            "20",
            "-c",
            "1",
            "--check-compare",
            "--rounds",
            "" + rounds);
    String output = run.output();
    assertEquals(0, run.exitCode(), output);

    List<String> labels = new ArrayList<>();
    List<double[]> roundTimes = new ArrayList<>();
    List<String> configs = new ArrayList<>();
    List<String[]> rows = new ArrayList<>();
    for (String line : output.split("\n")) {
      int at = line.indexOf(ROUNDS);
      if (line.startsWith("# ") && at > 0) {
        labels.add(line.substring(2, at));
        String[] values = line.substring(at + ROUNDS.length(), line.length() - 1).split(", ");
        roundTimes.add(Arrays.stream(values).mapToDouble(Double::parseDouble).toArray());
      } else if (line.startsWith("# config: ")) {
        configs.add(line);
      } else if (line.trim().startsWith("8 ") && line.contains("float32")) {
        rows.add(line.trim().split("\\s+"));
      }
    }
    assertEquals(List.of("auto,checkCalls=false", "auto,checkCalls=true"), labels, output);
    assertEquals(2, configs.size(), output);
    assertTrue(configs.get(0).contains("checkCalls=false"), configs.get(0));
    assertTrue(configs.get(1).contains("checkCalls=true"), configs.get(1));
    assertEquals(2, rows.size(), output);
    for (int v = 0; v < 2; v++) {
      double[] times = roundTimes.get(v);
      assertEquals(rounds, times.length, labels.get(v));
      Arrays.sort(times);
      // the row prints the median round with two decimals
      assertEquals(
          String.format(Locale.ROOT, "%.2f", times[rounds / 2]),
          rows.get(v)[5],
          labels.get(v) + ": the row's time is not the median round");
      assertEquals("0", rows.get(v)[8], labels.get(v) + ": wrong results");
    }
  }

  @Test
  void roundsMatterOnlyToAComparison() {
    PerfOptions o = new PerfOptions();
    new CommandLine(o).parseArgs("-i", "3");
    PerfRank.validate(o); // fewer calls than the default rounds: fine without a comparison
  }

  @Test
  void refusesThreadsAnotherComparisonAndMoreRoundsThanCalls() {
    for (String[] args :
        List.of(
            new String[] {"--threads", "--check-compare"},
            new String[] {"-a", "compare", "--check-compare"},
            new String[] {"--device", "cuda:0", "--check-compare"},
            new String[] {"-i", "5", "--rounds", "6", "--check-compare"})) {
      PerfOptions o = new PerfOptions();
      new CommandLine(o).parseArgs(args);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> PerfRank.validate(o));
      assertTrue(
          e.getMessage().contains("--check-compare") || e.getMessage().contains("--rounds"),
          String.join(" ", args) + ": " + e.getMessage());
    }
  }
}
