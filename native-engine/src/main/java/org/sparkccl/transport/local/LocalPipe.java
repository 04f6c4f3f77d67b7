package org.sparkccl.transport.local;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.transport.FailureNotice;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * The in-process transport: one ring connection between two ranks that are threads of one JVM,
 * found by both ends by (communicator token, sender, receiver, channel). Host kernels: the
 * receiving proxy posts its free FIFO slots here and the sending proxy copies each filled send slot
 * into the posted one (copying in parts on a thread pool halved the bandwidth on the H200 machine,
 * where spinning kernel threads already hold the cores). GPU kernels: the receiver's block reads
 * the sender's send slots in place, and the pipe passes only sizes and calls (see {@link
 * #receiver}). Every method runs on one of the two proxy threads and is short; the pipe's lock only
 * orders the two of them.
 */
public final class LocalPipe {
  private static final ConcurrentHashMap<Key, LocalPipe> PIPES = new ConcurrentHashMap<>();

  private record Key(long token, int from, int to, int channel) {}

  private final Key key;
  private final ByteBuffer[] posted = new ByteBuffer[FifoLayout.STEPS];
  private final long[] postedStep = new long[FifoLayout.STEPS];
  private final long[] offeredStep = new long[FifoLayout.STEPS];
  private final int[] offeredSize = new int[FifoLayout.STEPS];
  private final CollectiveCall[] offeredCall = new CollectiveCall[FifoLayout.STEPS];

  /** Set by a receiver that reads the sender's slots itself (see {@link #receiver}). */
  private Fifo sharedBy;

  private volatile Runnable wakeSender = () -> {};
  private volatile Runnable wakeReceiver = () -> {};

  /**
   * Told, with its message, when the other end reports a failure. A rank learns of it at once, not
   * only when an operation of its own next touches this pipe: a rank waiting on a shared-memory
   * edge has none on its ring, and would otherwise wait for its timeout.
   */
  private volatile Consumer<String> senderFailed = m -> {};

  private volatile Consumer<String> receiverFailed = m -> {};
  private String failure;
  private int open = 2;

  private LocalPipe(Key key) {
    this.key = key;
    java.util.Arrays.fill(postedStep, -1);
    java.util.Arrays.fill(offeredStep, -1);
  }

  private static LocalPipe of(long token, int from, int to, int channel) {
    return PIPES.computeIfAbsent(new Key(token, from, to, channel), LocalPipe::new);
  }

  /**
   * The sending end, rank {@code from} to {@code to}; {@code wake} wakes its proxy, {@code failed}
   * hears the receiver's failure.
   */
  public static SendConnection sender(
      long token, int from, int to, int channel, Runnable wake, Consumer<String> failed) {
    LocalPipe p = of(token, from, to, channel);
    synchronized (p) {
      p.wakeSender = Objects.requireNonNull(wake);
      p.senderFailed = Objects.requireNonNull(failed);
    }
    return p.new SendEnd();
  }

  /**
   * The receiving end of the same pipe. With {@code sharedSlots}, the receiver's kernel reads each
   * slot straight from the sender's send FIFO (CUDA kernels of one process can), so nothing is
   * copied: the pipe passes the slot's size and call, and frees the sender's slot once {@code
   * sharedSlots} (the receiver's FIFO) has released that step. Otherwise the sender's proxy copies
   * each slot into the one the receiver posted.
   */
  public static RecvConnection receiver(
      long token,
      int from,
      int to,
      int channel,
      Runnable wake,
      Consumer<String> failed,
      Fifo sharedSlots) {
    LocalPipe p = of(token, from, to, channel);
    synchronized (p) {
      p.wakeReceiver = Objects.requireNonNull(wake);
      p.receiverFailed = Objects.requireNonNull(failed);
      p.sharedBy = sharedSlots;
    }
    return p.new RecvEnd();
  }

  private void checkFailed() {
    if (failure != null) {
      throw FailureNotice.raise(failure);
    }
  }

  /** Records the pipe's first failure; returns whether this was it. */
  private synchronized boolean fail(String message) {
    if (failure == null) {
      failure = message;
      return true;
    }
    return false;
  }

  private void closeEnd(String who) {
    synchronized (this) {
      boolean unused = fail("rank " + who + " has closed its communicator"); // a close is no news
      if (--open == 0) {
        PIPES.remove(key, this);
      }
    }
    wakeSender.run();
    wakeReceiver.run();
  }

  private final class SendEnd implements SendConnection {
    /**
     * One request per slot, reused: the proxy posts a step only once the slot's previous step has
     * completed (as over sockets), and a request per step was most of what a mid-size ring
     * allocated over this transport.
     */
    private final SendRequest[] requests = new SendRequest[FifoLayout.STEPS];

    @Override
    public NetRequest postSend(ByteBuffer data, int size, long step, CollectiveCall call) {
      int slot = FifoLayout.slotOf(step);
      if (requests[slot] == null) {
        requests[slot] = new SendRequest();
      }
      return requests[slot].reuse(data, size, step, call);
    }

    /**
     * The sending proxy copies from whatever memory it is given, unless the receiver reads the
     * sender's slots in place (then the bytes must be in the slot).
     */
    @Override
    public boolean sendsFromAnyMemory() {
      synchronized (LocalPipe.this) {
        return sharedBy == null;
      }
    }

    @Override
    public void notifyFailure(String message) {
      boolean first = fail(message);
      wakeReceiver.run();
      if (first) {
        receiverFailed.accept(message);
      }
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

  /**
   * One send: offers its step to the receiver, copied into the receive slot posted for it (once
   * there is one) or, with shared slots, only announced; done when the sender's slot is free again:
   * at once after a copy, once the receiver has released the step when it reads in place.
   */
  private final class SendRequest implements NetRequest {
    private ByteBuffer data;
    private int size;
    private long step;
    private CollectiveCall call;
    private boolean offered;
    private boolean done;

    /** Makes this the request of {@code step}, forgetting the slot's previous step. */
    SendRequest reuse(ByteBuffer data, int size, long step, CollectiveCall call) {
      this.data = data;
      this.size = size;
      this.step = step;
      this.call = call;
      this.offered = false;
      this.done = false;
      return this;
    }

    @Override
    public boolean test() {
      if (done) {
        return true;
      }
      int slot = FifoLayout.slotOf(step);
      Fifo shared;
      boolean offeredNow = false;
      synchronized (LocalPipe.this) {
        checkFailed();
        shared = sharedBy;
        if (!offered && (shared != null || postedStep[slot] == step)) {
          if (shared == null) {
            posted[slot].put(0, data, 0, size);
            postedStep[slot] = -1;
            posted[slot] = null;
          }
          offeredStep[slot] = step;
          offeredSize[slot] = size;
          offeredCall[slot] = call;
          offered = true;
          offeredNow = true;
          data = null; // copied or never needed: the request, kept per slot, holds no buffer
        }
      }
      if (offeredNow) {
        wakeReceiver.run();
      }
      done = offered && (shared == null || shared.head() > step);
      return done;
    }

    @Override
    public int size() {
      return size;
    }
  }

  /** One receive: done once the sender has offered its step (see {@link SendRequest}). */
  private final class RecvRequest implements NetRequest {
    private int slot;
    private long step;
    private int size;
    private CollectiveCall call;

    /** Makes this the request of {@code step}, forgetting the slot's previous step. */
    RecvRequest reuse(int slot, long step) {
      this.slot = slot;
      this.step = step;
      this.size = -1;
      this.call = null;
      return this;
    }

    @Override
    public boolean test() {
      if (size < 0) {
        synchronized (LocalPipe.this) {
          if (offeredStep[slot] == step) {
            size = offeredSize[slot];
            call = offeredCall[slot];
            offeredStep[slot] = -1;
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
  }

  private final class RecvEnd implements RecvConnection {
    /** One request per slot, reused (see {@link SendEnd}). */
    private final RecvRequest[] requests = new RecvRequest[FifoLayout.STEPS];

    /** The sending proxy copies into whatever memory is posted, unless nothing is copied. */
    @Override
    public boolean readsIntoAnyMemory() {
      synchronized (LocalPipe.this) {
        return sharedBy == null;
      }
    }

    @Override
    public NetRequest postRecv(ByteBuffer data, long step) {
      int slot = FifoLayout.slotOf(step);
      synchronized (LocalPipe.this) {
        posted[slot] = data;
        postedStep[slot] = step;
      }
      wakeSender.run();
      if (requests[slot] == null) {
        requests[slot] = new RecvRequest();
      }
      return requests[slot].reuse(slot, step);
    }

    @Override
    public int peer() {
      return key.from();
    }

    @Override
    public void notifyPeer(boolean failed, String message) {
      if (failed) {
        boolean first = fail(message);
        wakeSender.run();
        if (first) {
          senderFailed.accept(message);
        }
      }
    }

    @Override
    public void close() {
      closeEnd(Integer.toString(key.to()));
    }
  }
}
