package org.sparkccl;

import java.time.Duration;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.bootstrap.LocalBootstrap;

/**
 * A rank of a local group that reports a shared secret (as Spark's application secret reaches the
 * engine) and keeps the first exchange it took part in, as someone reading the bootstrap would see
 * it.
 *
 * <pre>{@code
 * Bootstrap b = new SecretBootstrap(LocalBootstrap.group(2).rank(0), "app".getBytes(UTF_8));
 * }</pre>
 */
public final class SecretBootstrap implements Bootstrap {
  private final LocalBootstrap local;
  private final byte[] shared;
  private volatile byte[][] firstExchange;

  public SecretBootstrap(LocalBootstrap local, byte[] shared) {
    this.local = local;
    this.shared = shared;
  }

  /** Every rank's part of the first allGather (the address exchange), or null before it. */
  public byte[][] firstExchange() {
    return firstExchange;
  }

  @Override
  public int rank() {
    return local.rank();
  }

  @Override
  public int nRanks() {
    return local.nRanks();
  }

  @Override
  public byte[][] allGather(byte[] mine, Duration timeout) {
    byte[][] all = local.allGather(mine, timeout);
    if (firstExchange == null) {
      firstExchange = all;
    }
    return all;
  }

  @Override
  public byte[] sharedSecret() {
    return shared;
  }
}
