package org.sparkccl.idle;

import java.util.function.BooleanSupplier;

/**
 * What a waiting thread does with a pass that found nothing to do: spin, yield, or take its
 * blocking step. In the style of Agrona's {@code IdleStrategy}; one instance per waiting thread and
 * wait site, not thread-safe. {@link IdleStrategies} makes them from the {@code idle} key.
 *
 * <p>Not Agrona's interface, because our waits end differently. Agrona's {@code idle()} ends in a
 * timed park of its own; every wait here ends in a blocking step that only the caller knows and
 * that a waker ends early: the proxy blocks in its selector ({@code Selector.wakeup()}), a kernel
 * parks until a FIFO callback unparks it, a socket helper selects on its sockets. So {@link #idle}
 * only spins or yields and says when that step is due, and {@link #mayBlock} says whether the step
 * may block or must only poll. And work does not reset a wait as it does in Agrona: a kernel waits
 * for one condition however many of its passes move something, so the caller says when a wait
 * begins ({@link #reset}).
 *
 * <pre>{@code
 * strategy.reset();
 * while (!ready()) {
 *   int work = doWork();
 *   if (strategy.idle(work)) {
 *     block(strategy.mayBlock()); // a selector, or a park that a waker ends
 *   }
 * }
 * }</pre>
 */
public interface IdleStrategy {
  /** A new wait begins. */
  void reset();

  /**
   * One more pass of the current wait, which did {@code workCount} things. A pass that did nothing
   * spins or yields here; one that did something gives the CPU up to nobody.
   *
   * @return true once the wait has outlasted its brief phase: the caller takes its blocking step
   *     now, and on every later pass until {@link #reset}
   */
  boolean idle(int workCount);

  /** Whether the caller's blocking step may block; false where it must only poll (spin mode). */
  boolean mayBlock();

  /**
   * A fresh wait that only checks {@code ready}: returns true as soon as it holds, false when the
   * caller should block instead (its own way, which something that makes {@code ready} true ends).
   */
  default boolean awaitBriefly(BooleanSupplier ready) {
    reset();
    while (!ready.getAsBoolean()) {
      if (idle(0) && mayBlock()) {
        return false;
      }
    }
    return true;
  }
}
