package org.sparkccl.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import jdk.jfr.Recording;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WaitProfile} over a real flight recording of this JVM: threads named as the engine names
 * them park a random number of times and wait for a monitor another thread holds; the summary must
 * count every park at its site, under the thread's kind, and the monitor wait with its class.
 */
@DisplayName("the wait profile's summary of flight recordings")
class WaitProfileTest {
  private final Object monitor = new Object();

  @Test
  @Timeout(60)
  void countsEveryParkAtItsSiteAndTheContendedMonitor(@TempDir Path dir) throws Exception {
    Random random = new Random(20261205);
    int[] parks = {50 + random.nextInt(100), 50 + random.nextInt(100)};
    try (Recording recording = new Recording()) {
      recording.enable("jdk.ThreadPark").withThreshold(Duration.ZERO).withStackTrace();
      recording.enable("jdk.JavaMonitorEnter").withThreshold(Duration.ZERO).withStackTrace();
      recording.start();
      Thread[] parkers = new Thread[parks.length];
      for (int r = 0; r < parks.length; r++) {
        int n = parks[r];
        parkers[r] = new Thread(() -> parkTimes(n), "sparkccl-proxy-r" + (r + 3));
        parkers[r].start();
      }
      for (Thread t : parkers) {
        t.join(TimeUnit.SECONDS.toMillis(30));
      }
      Thread blocked;
      synchronized (monitor) {
        blocked = new Thread(this::enterMonitor, "sparkccl-kernel-r3-c0");
        blocked.start();
        // hold the monitor until the other thread is blocked on it, then a little longer
        while (blocked.getState() != Thread.State.BLOCKED) {
          Thread.onSpinWait();
        }
        Thread.sleep(20);
      }
      blocked.join(TimeUnit.SECONDS.toMillis(30));
      recording.stop();
      recording.dump(dir.resolve("rank.jfr"));
    }
    Files.writeString(dir.resolve("not-a-recording.txt"), "ignored");

    WaitProfile.Waits waits = WaitProfile.read(dir);
    assertEquals(1, waits.rankProcesses, "one recording with an engine thread's waits");
    Map<String, WaitProfile.Tally> proxy = waits.byThread.get("sparkccl-proxy-rN");
    assertNotNull(proxy, "kinds: " + waits.byThread.keySet());
    WaitProfile.Tally atSite =
        proxy.get(
            "WaitProfileTest.parkTimes < WaitProfileTest.lambda$countsEveryParkAtItsSiteAndTheContendedMonitor$0");
    assertNotNull(atSite, "sites: " + proxy.keySet());
    assertEquals(parks[0] + parks[1], atSite.count, "every park of both threads, at one site");
    assertTrue(atSite.nanos >= (parks[0] + parks[1]) * 10_000L, "each park lasts 10 us or more");

    Map<String, WaitProfile.Tally> kernel = waits.byThread.get("sparkccl-kernel-rN-cN");
    assertNotNull(kernel, "kinds: " + waits.byThread.keySet());
    WaitProfile.Tally entered = kernel.get("monitor Object at WaitProfileTest.enterMonitor");
    assertNotNull(entered, "sites: " + kernel.keySet());
    assertEquals(1, entered.count);
    assertTrue(entered.nanos >= 15_000_000L, "waited while the monitor was held: " + entered.nanos);

    ByteArrayOutputStream text = new ByteArrayOutputStream();
    long calls = (long) parks[0] + parks[1];
    WaitProfile.print(waits, calls, 5, new PrintStream(text, true, StandardCharsets.UTF_8));
    String out = text.toString(StandardCharsets.UTF_8);
    // one park a call at the site; the kind's total may hold more: once in CI the recording also
    // held a contended monitor entered inside parkTimes (an Object's, below the test's own code)
    assertTrue(
        out.lines()
            .anyMatch(
                l -> l.matches("\\s*1\\.0000\\s+\\S+\\s+\\S+\\s+WaitProfileTest\\.parkTimes <.*")),
        out);
    assertTrue(out.contains("## sparkccl-proxy-rN: 1.0"), out);
  }

  private static void parkTimes(int n) {
    for (int i = 0; i < n; i++) {
      LockSupport.parkNanos(10_000);
    }
  }

  private void enterMonitor() {
    synchronized (monitor) {
      Thread.onSpinWait();
    }
  }
}
