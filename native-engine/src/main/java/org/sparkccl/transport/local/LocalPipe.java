package org.sparkccl.transport.local;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.sparkccl.CclRemoteException;
import org.sparkccl.CollectiveCall;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * The in-process transport: one ring connection between two ranks that are threads of one JVM.
 * The receiving proxy posts its free FIFO slots here; the sending proxy copies each filled send
 * slot straight into the posted receive slot (one memory copy, no socket; copying a slot in parts
 * on a thread pool halved the bandwidth on the H200 machine, where spinning kernel threads
 * already occupy the cores). Both ends find the
 * pipe by (communicator token, sender, receiver, channel). Every method runs on one of the two
 * proxy threads and is short; the pipe's lock only orders the two of them.
 */
public final class LocalPipe {
  private static final ConcurrentHashMap<Key, LocalPipe> PIPES = new ConcurrentHashMap<>();

  private record Key(long token, int from, int to, int channel) {}

  private final Key key;
  private final ByteBuffer[] posted = new ByteBuffer[FifoLayout.STEPS];
  private final long[] postedStep = new long[FifoLayout.STEPS];
  private final int[] delivered = new int[FifoLayout.STEPS];
  private final CollectiveCall[] calls = new CollectiveCall[FifoLayout.STEPS];
  private Runnable wakeSender = () -> {};
  private Runnable wakeReceiver = () -> {};
  private String failure;
  private int open = 2;

  private LocalPipe(Key key) {
    this.key = key;
    java.util.Arrays.fill(postedStep, -1);
    java.util.Arrays.fill(delivered, -1);
  }

  private static LocalPipe of(long token, int from, int to, int channel) {
    return PIPES.computeIfAbsent(new Key(token, from, to, channel), LocalPipe::new);
  }

  /** The sending end, rank {@code from} to {@code to}; {@code wake} wakes its proxy. */
  public static SendConnection sender(long token, int from, int to, int channel, Runnable wake) {
    LocalPipe p = of(token, from, to, channel);
    synchronized (p) {
      p.wakeSender = Objects.requireNonNull(wake);
    }
    return p.new SendEnd();
  }

  /** The receiving end of the same pipe. */
  public static RecvConnection receiver(long token, int from, int to, int channel, Runnable wake) {
    LocalPipe p = of(token, from, to, channel);
    synchronized (p) {
      p.wakeReceiver = Objects.requireNonNull(wake);
    }
    return p.new RecvEnd();
  }

  private void checkFailed() {
    if (failure != null) {
      throw new CclRemoteException(failure);
    }
  }

  private synchronized void fail(String message) {
    if (failure == null) {
      failure = message;
    }
  }

  private void closeEnd(String who) {
    synchronized (this) {
      fail("rank " + who + " has closed its communicator");
      if (--open == 0) {
        PIPES.remove(key, this);
      }
    }
    wakeSender.run();
    wakeReceiver.run();
  }

  private final class SendEnd implements SendConnection {
    @Override
    public NetRequest postSend(ByteBuffer data, int size, long step, CollectiveCall call) {
      return new NetRequest() {
        private boolean done;

        @Override
        public boolean test() {
          if (!done) {
            done = deliver(data, size, step, call);
          }
          return done;
        }

        @Override
        public int size() {
          return size;
        }
      };
    }

    @Override
    public void notifyFailure(String message) {
      fail(message);
      wakeReceiver.run();
    }

    @Override
    public int peer() {
      return key.to();
    }

    @Override
    public void close() {
      closeEnd(Integer.toString(key.from()));
    }
  }

  /** Copies the send slot into the receive slot posted for {@code step}, if there is one. */
  private boolean deliver(ByteBuffer data, int size, long step, CollectiveCall call) {
    int slot = FifoLayout.slotOf(step);
    synchronized (this) {
      if (postedStep[slot] != step) {
        checkFailed();
        return false;
      }
      posted[slot].put(0, data, 0, size);
      delivered[slot] = size;
      calls[slot] = call;
      postedStep[slot] = -1;
      posted[slot] = null;
    }
    wakeReceiver.run();
    return true;
  }

  private final class RecvEnd implements RecvConnection {
    @Override
    public NetRequest postRecv(ByteBuffer data, long step) {
      int slot = FifoLayout.slotOf(step);
      synchronized (LocalPipe.this) {
        posted[slot] = data;
        postedStep[slot] = step;
        delivered[slot] = -1;
      }
      wakeSender.run();
      return new NetRequest() {
        private int size = -1;
        private CollectiveCall call;

        @Override
        public boolean test() {
          if (size < 0) {
            synchronized (LocalPipe.this) {
              if (delivered[slot] >= 0 && postedStep[slot] != step) {
                size = delivered[slot];
                call = calls[slot];
                delivered[slot] = -1;
              } else {
                checkFailed();
              }
            }
          }
          return size >= 0;
        }

        @Override
        public int size() {
          return size;
        }

        @Override
        public CollectiveCall call() {
          return call;
        }
      };
    }

    @Override
    public int peer() {
      return key.from();
    }

    @Override
    public void notifyPeer(boolean failed, String message) {
      if (failed) {
        fail(message);
        wakeSender.run();
      }
    }

    @Override
    public void close() {
      closeEnd(Integer.toString(key.to()));
    }
  }
}
