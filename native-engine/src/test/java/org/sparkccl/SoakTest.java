package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;

/**
 * Many communicators in a row, each created, used and closed one of three ways (a checked
 * allReduce; an allReduce aborted while its peer never calls; one that times out): the process's
 * threads, open file descriptors and off-heap bytes must come back to where they were. 300 in the
 * test suite over sockets; {@code bench/faults.sh} runs 1,000, and 300 over UCX ({@code
 * -Dsparkccl.soak.count}, {@code -Dsparkccl.soak.transport}).
 */
@DisplayName("soak")
class SoakTest {
  @Test
  @DisplayName(
      "communicators created, used and closed (normal, aborted, timed out) give back every thread,"
          + " file descriptor and off-heap byte")
  void manyCommunicatorsLeaveNothingBehind() throws InterruptedException {
    int count = Integer.getInteger("sparkccl.soak.count", 300);
    // sockets, whatever the run's transport: file descriptors are what they hold, and over UCX an
    // aborted or timed-out communicator takes about 1 s to close here (300 would take 4 minutes)
    CclConfig base =
        CclConfig.builder()
            .transport(
                Transport.valueOf(
                    System.getProperty("sparkccl.soak.transport", "socket")
                        .toUpperCase(Locale.ROOT)))
            .build();
    SoakRun.Result r = new SoakRun("SoakTest", base, () -> 0).run(count);
    System.out.println("SoakTest: " + r);
    assertEquals(r.before().offHeapBytes(), r.after().offHeapBytes(), "off-heap bytes left");
    assertTrue(
        r.after().fds() <= r.before().fds(),
        "file descriptors left open: "
            + r.before().fds()
            + " before, "
            + r.after().fds()
            + " after");
    assertEquals(List.of(), r.after().newThreads(r.before()), "threads left running");
  }
}
