package org.sparkccl.idle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.config.Key;

/**
 * Each mode's sequence of spins, yields and blocking steps, on a clock the test moves: every yield
 * takes 10 us of it, so a 50 us window holds five yields.
 */
class IdleStrategiesTest {
  private static final long WINDOW = 50_000;
  private static final long YIELD_NANOS = 10_000;

  /** Records what a strategy did: S (spin), Y (yield), B (the caller's blocking step is due). */
  private static final class Recorder implements Pause {
    final StringBuilder seen = new StringBuilder();
    long now;

    @Override
    public void spin() {
      seen.append('S');
    }

    @Override
    public void yieldCpu() {
      seen.append('Y');
      now += YIELD_NANOS;
    }

    IdleStrategies strategies(IdleMode mode) {
      return new IdleStrategies(mode, WINDOW, () -> now, this);
    }

    /** {@code passes} passes that did {@code work} each, noting when the blocking step is due. */
    String idle(IdleStrategy s, int passes, int work) {
      for (int i = 0; i < passes; i++) {
        if (s.idle(work)) {
          seen.append('B');
        }
      }
      String out = seen.toString();
      seen.setLength(0);
      return out;
    }
  }

  @Test
  @DisplayName("backoff spins, then yields through the window, then blocks until reset")
  void backoffSpinsThenYieldsThenBlocks() {
    Recorder r = new Recorder();
    IdleStrategy s = r.strategies(IdleMode.BACKOFF).inFlight(3);
    s.reset();
    assertEquals("SSSYYYYYBBB", r.idle(s, 11, 0));
    assertTrue(s.mayBlock());
    s.reset();
    assertEquals("SSSYYYYYB", r.idle(s, 9, 0), "a reset starts a new wait");
  }

  @Test
  @DisplayName("a backoff pass that did work gives the CPU to nobody, and the window still runs")
  void backoffPassesWithWorkNeitherSpinNorYield() {
    Recorder r = new Recorder();
    IdleStrategy s = r.strategies(IdleMode.BACKOFF).inFlight(0);
    s.reset();
    assertEquals("", r.idle(s, 3, 1));
    r.now += WINDOW;
    assertEquals("B", r.idle(s, 1, 1), "work does not restart the wait");
  }

  @Test
  @DisplayName("spin never lets the caller block while work is in flight, and never yields")
  void spinNeverBlocks() {
    Recorder r = new Recorder();
    IdleStrategy s = r.strategies(IdleMode.SPIN).inFlight(3);
    s.reset();
    assertEquals("SSS", r.idle(s, 3, 0));
    r.now += WINDOW;
    assertEquals("SBSB", r.idle(s, 2, 0), "past the window the stalled step comes due");
    assertFalse(s.mayBlock(), "but it may only poll");
  }

  @Test
  @DisplayName("park blocks at once, without spinning or yielding")
  void parkBlocksAtOnce() {
    Recorder r = new Recorder();
    for (IdleStrategy s :
        new IdleStrategy[] {
          r.strategies(IdleMode.PARK).inFlight(64),
          r.strategies(IdleMode.PARK).forNewWork(64),
          r.strategies(IdleMode.PARK).onEvents()
        }) {
      s.reset();
      assertEquals("B", r.idle(s, 1, 0));
      assertTrue(s.mayBlock());
    }
  }

  @Test
  @DisplayName("a wait for new work backs off in spin mode too")
  void newWorkBacksOffInSpinMode() {
    Recorder r = new Recorder();
    IdleStrategy s = r.strategies(IdleMode.SPIN).forNewWork(2);
    s.reset();
    assertEquals("SSYYYYYB", r.idle(s, 8, 0));
    assertTrue(s.mayBlock());
  }

  @Test
  @DisplayName("a socket helper blocks at once by default and polls in spin mode")
  void helpersBlockAtOnceUnlessSpinning() {
    Recorder r = new Recorder();
    IdleStrategy backoff = r.strategies(IdleMode.BACKOFF).onEvents();
    assertEquals("B", r.idle(backoff, 1, 0));
    assertTrue(backoff.mayBlock());
    IdleStrategy spin = r.strategies(IdleMode.SPIN).onEvents();
    spin.reset();
    assertEquals("SB", r.idle(spin, 1, 0));
    assertFalse(spin.mayBlock());
  }

  @Test
  @DisplayName("a brief wait ends when ready holds, or tells the caller to block after the window")
  void awaitBrieflyEndsOnReadyOrWhenTheCallerShouldBlock() {
    Recorder r = new Recorder();
    int[] checks = {0};
    assertTrue(r.strategies(IdleMode.BACKOFF).inFlight(2).awaitBriefly(() -> ++checks[0] > 3));
    assertEquals("SSY", r.seen.toString());
    r.seen.setLength(0);
    assertFalse(r.strategies(IdleMode.BACKOFF).inFlight(2).awaitBriefly(() -> false));
    assertEquals("SSYYYYY", r.seen.toString());
    r.seen.setLength(0);
    assertFalse(r.strategies(IdleMode.PARK).inFlight(2).awaitBriefly(() -> false));
    assertEquals("", r.seen.toString());
  }

  @Test
  @DisplayName("a brief wait in spin mode spins until ready, however long that takes")
  void awaitBrieflyInSpinModeSpinsUntilReady() {
    Recorder r = new Recorder();
    int[] checks = {0};
    IdleStrategy s = r.strategies(IdleMode.SPIN).inFlight(0);
    assertTrue(
        s.awaitBriefly(
            () -> {
              r.now += WINDOW; // every check looks like a whole window later
              return ++checks[0] > 100;
            }));
    assertEquals(100, r.seen.length());
    assertFalse(r.seen.toString().contains("Y"));
  }

  @Test
  @DisplayName(
      "the defaults: auto, which backs off until the ranks have met, with a 200 us yield window"
          + " and no cap on cores per rank")
  void defaultsAreAutoWith200Us() {
    CclConfig c = CclConfig.builder().build();
    assertEquals(IdleMode.AUTO, c.idle());
    assertEquals(200, c.idleYieldUs());
    assertEquals(0, c.idleCpusPerRank());
    assertEquals(IdleMode.AUTO, IdleStrategies.defaults().mode());
    assertEquals(IdleMode.BACKOFF, IdleStrategies.defaults().effectiveMode());
  }

  @Test
  @DisplayName(
      "auto backs off until it settles and where the cores do not cover the polling threads,"
          + " and spins where they do")
  void autoFollowsTheCores() {
    Recorder r = new Recorder();
    IdleStrategies auto = r.strategies(IdleMode.AUTO);
    IdleStrategy s = auto.inFlight(3);
    IdleStrategy helper = auto.onEvents();
    s.reset();
    assertEquals("SSSYYYYYB", r.idle(s, 9, 0), "before the ranks met");
    assertTrue(s.mayBlock());
    // four ranks of three polling threads on two cores: the case of a 2-core machine
    assertEquals(IdleMode.BACKOFF, auto.settle(4, 3, 2));
    s.reset();
    assertEquals("SSSYYYYYB", r.idle(s, 9, 0));
    assertTrue(s.mayBlock());
    helper.reset();
    assertEquals("B", r.idle(helper, 1, 0));
    assertTrue(helper.mayBlock());
    assertEquals(IdleMode.SPIN, auto.settle(4, 3, 12));
    s.reset();
    assertEquals("SSSSSSSSS", r.idle(s, 9, 0));
    r.now += WINDOW;
    assertEquals("SB", r.idle(s, 1, 0));
    assertFalse(s.mayBlock(), "spinning, it only polls");
    helper.reset();
    assertEquals("SB", r.idle(helper, 1, 0));
    assertFalse(helper.mayBlock());
    IdleStrategy newWork = auto.forNewWork(2);
    newWork.reset();
    assertEquals("SSYYYYYB", r.idle(newWork, 8, 0), "a wait for new work still backs off");
    assertEquals(IdleMode.BACKOFF, auto.settle(5, 3, 14), "one thread more than the cores");
  }

  @Test
  @DisplayName("settling leaves the other modes as configured")
  void settleLeavesOtherModesAlone() {
    for (IdleMode m : new IdleMode[] {IdleMode.SPIN, IdleMode.BACKOFF, IdleMode.PARK}) {
      IdleStrategies st = new Recorder().strategies(m);
      assertEquals(m, st.settle(1, 1, 64));
      assertEquals(m, st.settle(64, 8, 1));
    }
  }

  @Test
  @DisplayName("idle and idle.yieldUs parse from their text forms and name the key when bad")
  void keysParseAndNameTheKeyWhenBad() {
    assertEquals("SPARKCCL_IDLE", Key.IDLE.environmentVariable());
    assertEquals("spark.ccl.idle", Key.IDLE.sparkConf());
    assertEquals("sparkccl.idle.yieldUs", Key.IDLE_YIELD_US.systemProperty());
    assertEquals("SPARKCCL_IDLE_YIELDUS", Key.IDLE_YIELD_US.environmentVariable());
    CclConfig c = CclConfig.fromMap(Map.of("idle", "SPIN", "idle.yieldUs", "50"));
    assertEquals(IdleMode.SPIN, c.idle());
    assertEquals(50, c.idleYieldUs());
    assertEquals("park", CclConfig.fromMap(Map.of("idle", "park")).asMap().get("idle"));
    IllegalArgumentException bad =
        assertThrows(IllegalArgumentException.class, () -> CclConfig.fromMap(Map.of("idle", "x")));
    assertTrue(bad.getMessage().contains("idle=x"), bad.getMessage());
    IllegalArgumentException negative =
        assertThrows(
            IllegalArgumentException.class, () -> CclConfig.fromMap(Map.of("idle.yieldUs", "-1")));
    assertTrue(negative.getMessage().contains("idle.yieldUs=-1"), negative.getMessage());
  }
}
