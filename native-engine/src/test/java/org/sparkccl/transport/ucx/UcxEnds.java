package org.sparkccl.transport.ucx;

import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.fifo.Fifo;

/**
 * For tests: two UCX transports of one channel, rank 0 sending to rank 1 ({@link #out} and {@link
 * #in}), each proven to the other; the calling thread acts as both ranks' proxy. {@link #close}
 * closes both transports (a second close of one is a no-op) and frees the FIFOs.
 */
record UcxEnds(
    UcxTransport rank0, UcxTransport rank1, UcxConnection out, UcxConnection in, Fifo[] fifos)
    implements AutoCloseable {
  private static final int STEP = 64 << 10;

  static UcxEnds connect(long seed) throws Exception {
    Fifo[] fifos = {new Fifo(STEP), new Fifo(STEP), new Fifo(STEP), new Fifo(STEP)};
    UcxTransport rank0 = UcxTransport.open(0, 1, new Fifo[] {fifos[0]}, new Fifo[] {fifos[1]});
    UcxTransport rank1 = UcxTransport.open(1, 1, new Fifo[] {fifos[2]}, new Fifo[] {fifos[3]});
    byte[] secret = new byte[ChallengeResponse.SECRET_BYTES];
    new SplittableRandom(seed).nextBytes(secret);
    for (UcxTransport t : new UcxTransport[] {rank0, rank1}) {
      t.useSecret(secret);
      t.onProxy(Runnable::run);
    }
    UcxConnection out = (UcxConnection) rank0.connectSend(1, 0, rank1.localInfo());
    UcxConnection in = (UcxConnection) rank1.connectRecv(0, 0, rank0.localInfo());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    ExecutorService prover = Executors.newSingleThreadExecutor();
    try {
      Future<?> proven = prover.submit(() -> rank1.awaitPeersProven(deadline));
      rank0.awaitPeersProven(deadline);
      proven.get(30, TimeUnit.SECONDS);
    } finally {
      prover.shutdown();
    }
    return new UcxEnds(rank0, rank1, out, in, fifos);
  }

  /** Polls both transports until {@code done} holds or {@code millis} pass. */
  void pollUntil(BooleanSupplier done, long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (!done.getAsBoolean() && System.nanoTime() < end) {
      rank0.poll();
      rank1.poll();
    }
  }

  @Override
  public void close() {
    rank0.close(false);
    rank1.close(false);
    for (Fifo f : fifos) {
      f.close();
    }
  }
}
