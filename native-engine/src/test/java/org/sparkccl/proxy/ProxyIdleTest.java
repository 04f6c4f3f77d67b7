package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.idle.IdleStrategies;

/**
 * {@link ProxyThread#isIdle()} is what a closing communicator waits on before it closes its
 * connections: it must never say idle while an operation is queued or linked, however the proxy's
 * own passes and a kernel's assist interleave.
 */
@DisplayName("proxy thread idleness")
class ProxyIdleTest {

  /** Moves nothing until told to finish. */
  private static final class Held extends ProxyOp {
    private final Object key = new Object();
    private volatile boolean finish;

    @Override
    public Object peerKey() {
      return key;
    }

    @Override
    public boolean progress(long nowNanos) {
      return false;
    }

    @Override
    public boolean isDone() {
      return finish;
    }

    @Override
    public String what() {
      return "held op";
    }
  }

  @Test
  @DisplayName(
      "an operation a kernel enqueues and links by assisting counts as work until it is unlinked,"
          + " whatever the proxy thread was doing")
  void enqueuedAndAssistedOperationsAreNeverIdle() {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy =
        new ProxyThread(
            "sparkccl-test-proxy", IdleStrategies.defaults(), e -> error.compareAndSet(null, e));
    proxy.start();
    int wrong = 0;
    int rounds = 200_000;
    try {
      SplittableRandom random = new SplittableRandom(7);
      for (int i = 0; i < rounds; i++) {
        Held op = new Held();
        // a pass of the proxy thread that finds nothing linked, at varying distances
        proxy.wake();
        for (int spin = random.nextInt(400); spin > 0; spin--) {
          Thread.onSpinWait();
        }
        proxy.enqueue(op);
        proxy.assist();
        // the proxy thread keeps passing over the linked operation meanwhile
        for (int look = 0; look < 4; look++) {
          if (proxy.isIdle()) {
            wrong++;
            break;
          }
          Thread.onSpinWait();
        }
        op.finish = true;
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!op.isUnlinked()) {
          proxy.assist();
          assertTrue(System.nanoTime() < deadline, "round " + i + ": the op was never unlinked");
        }
      }
    } finally {
      proxy.close(5_000);
    }
    assertNull(error.get());
    assertEquals(0, wrong, "rounds (of " + rounds + ") where the proxy said idle with work linked");
  }
}
