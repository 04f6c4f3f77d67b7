package org.sparkccl.idle;

/**
 * The strategy of an {@code idle=auto} wait site: made before the ranks meet, it backs off until
 * {@link IdleStrategies#settle} has decided, then follows the decision. It switches only when a
 * wait begins, so one wait never mixes the two.
 */
final class SwitchingIdleStrategy implements IdleStrategy {
  private final IdleStrategies owner;
  private final IdleStrategy spin;
  private final IdleStrategy backoff;
  private IdleStrategy current;

  SwitchingIdleStrategy(IdleStrategies owner, IdleStrategy spin, IdleStrategy backoff) {
    this.owner = owner;
    this.spin = spin;
    this.backoff = backoff;
    this.current = backoff;
  }

  @Override
  public void reset() {
    current = owner.spinning() ? spin : backoff;
    current.reset();
  }

  @Override
  public boolean idle(int workCount) {
    return current.idle(workCount);
  }

  @Override
  public boolean mayBlock() {
    return current.mayBlock();
  }
}
