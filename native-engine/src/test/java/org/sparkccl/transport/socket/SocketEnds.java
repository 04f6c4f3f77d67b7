package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.channels.Selector;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * For tests: rank 0's ring connection to rank 1 over real sockets on 127.0.0.1, its sending end
 * ({@link #out}) and receiving end ({@link #in}), each registered with a selector of its own that
 * no thread selects on unless the test does.
 */
record SocketEnds(
    SocketTransport receiver,
    SocketTransport sender,
    Selector recvSel,
    Selector sendSel,
    SendConnection out,
    RecvConnection in)
    implements AutoCloseable {

  /**
   * Connects the two ends; {@code receiverProxy}, where not null, writes the receiving end's
   * announcements ({@link SocketTransport#onProxy}, which must precede the accept).
   */
  static SocketEnds connect(Executor receiverProxy) throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    SocketTransport receiver = transport(1, secret);
    SocketTransport sender = transport(0, secret);
    if (receiverProxy != null) {
      receiver.onProxy(receiverProxy);
    }
    Selector recvSel = Selector.open();
    Selector sendSel = Selector.open();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    CompletableFuture<RecvConnection[]> accepted =
        CompletableFuture.supplyAsync(() -> receiver.accept(0, 1, recvSel, () -> {}, deadline));
    SendConnection out = sender.connect(receiver.address(), 1, 0, sendSel, () -> {}, deadline);
    RecvConnection in = accepted.get(30, TimeUnit.SECONDS)[0];
    return new SocketEnds(receiver, sender, recvSel, sendSel, out, in);
  }

  private static SocketTransport transport(int rank, byte[] secret) {
    SocketTransport t = SocketTransport.listen("127.0.0.1", rank, 0, 1, IdleStrategies.defaults());
    t.useSecret(secret);
    return t;
  }

  /** Closes the sending end; a registered channel's socket closes at its selector's next select. */
  void closeSender() throws IOException {
    out.close();
    sendSel.selectNow();
  }

  /** Closes the receiving end, as {@link #closeSender} does the sending one. */
  void closeReceiver() throws IOException {
    in.close();
    recvSel.selectNow();
  }

  @Override
  public void close() throws Exception {
    out.close();
    in.close();
    recvSel.close();
    sendSel.close();
    sender.close();
    receiver.close();
  }
}
