package org.sparkccl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

@DisplayName("the AllReduceJob example")
class AllReduceJobTest {
  @Test
  @Timeout(300)
  void runsInLocalSparkAndPrintsACorrectResultLine() {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    int code;
    try {
      System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
      code =
          new CommandLine(new AllReduceJob()).execute("--partitions", "3", "--elements", "100003");
    } finally {
      System.setOut(original);
    }
    String out = captured.toString(StandardCharsets.UTF_8).trim();
    String last = out.substring(out.lastIndexOf('\n') + 1);
    assertEquals(0, code, out);
    assertTrue(
        last.matches(
            "RESULT job=allreduce partitions=3 elements=100003 correct=true sparkccl_ms=[0-9.]+"
                + " treereduce_ms=[0-9.]+ speedup=[0-9.]+"),
        last);
  }
}
