package org.sparkccl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

@DisplayName("the LogisticRegressionJob example")
class LogisticRegressionJobTest {
  private static final Pattern RESULT =
      Pattern.compile(
          "RESULT job=logreg rows=1000 features=10 classes=2 partitions=2 iterations_ccl=(\\d+)"
              + " iterations_mllib=(\\d+) objective_rel_diff=(\\S+) auc_ccl=([0-9.]+)"
              + " auc_mllib=([0-9.]+) sparkccl_s=[0-9.]+ mllib_s=[0-9.]+ speedup=[0-9.]+");

  @Test
  @Timeout(300)
  void fitsBothEstimatorsAndPrintsAResultLineWhereTheyAgree() {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    int code;
    try {
      System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
      code =
          new CommandLine(new LogisticRegressionJob())
              .execute("--rows", "1000", "--features", "10", "--classes", "2", "--partitions", "2");
    } finally {
      System.setOut(original);
    }
    String out = captured.toString(StandardCharsets.UTF_8).trim();
    String last = out.substring(out.lastIndexOf('\n') + 1);
    assertEquals(0, code, out);
    Matcher m = RESULT.matcher(last);
    assertTrue(m.matches(), last);
    assertEquals(m.group(2), m.group(1), "iterations");
    assertTrue(Double.parseDouble(m.group(3)) < 1e-6, "objective_rel_diff " + m.group(3));
    assertEquals(Double.parseDouble(m.group(5)), Double.parseDouble(m.group(4)), 0.001);
  }
}
