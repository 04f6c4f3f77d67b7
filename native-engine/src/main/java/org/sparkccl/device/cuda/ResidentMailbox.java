package org.sparkccl.device.cuda;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jcuda.driver.CUdeviceptr;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.PrimitiveCall;

/**
 * Where a resident channel kernel ({@code residentKernel} in {@code sparkccl_kernels.cu}) finds its
 * next plan: mapped host memory holding the buffers' device addresses, the element type, the
 * operator and the calls, and a sequence number written last with a volatile store, so that the
 * kernel, which polls the number, never reads a half-written plan.
 *
 * <p>The byte offsets below repeat the kernel's {@code MB_} words; {@code CudaContractTest}
 * compares them.
 */
final class ResidentMailbox implements AutoCloseable {
  static final int SEQ = 0;
  static final int N_CALLS = 8;
  static final int SRC = 16;
  static final int DST = 24;
  static final int TYPE = 32;
  static final int N_RANKS = 40;
  static final int RECV_DATA = 48;
  static final int BLOCKS = 56;
  static final int SEND_STEP = 64;
  static final int RECV_STEP = 72;
  static final int SHUTDOWN = 128;
  static final int CALLS = 256;

  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

  private final MappedMemory memory;
  private final ByteBuffer words;
  private final int maxCalls;
  private long seq;

  ResidentMailbox(CudaDevice device, int maxCalls) {
    this.memory = device.allocateMapped(CALLS + (long) maxCalls * PlanEncoding.WORDS * Long.BYTES);
    this.words = memory.buffer();
    this.maxCalls = maxCalls;
  }

  /**
   * Posts calls {@code [first, first + n)} of {@code plan} and returns their sequence number.
   *
   * @param recvData the device address where the kernel reads received slots
   * @param blocks how many of the grid's blocks run the plan
   * @param sendStep the send step the plan starts from
   * @param recvStep the receive step the plan starts from
   */
  long post(
      ChannelPlan plan,
      int first,
      int n,
      long src,
      long dst,
      int type,
      int op,
      int nRanks,
      long recvData,
      int blocks,
      long sendStep,
      long recvStep) {
    if (n > maxCalls) {
      throw new IllegalArgumentException(n + " calls do not fit a mailbox of " + maxCalls);
    }
    write(words, plan, first, n, src, dst, type, op, nRanks, recvData, blocks, sendStep, recvStep);
    seq++;
    LONGS.setVolatile(words, SEQ, seq);
    return seq;
  }

  /** Everything of a post but the sequence number, into {@code words} (native order). */
  static void write(
      ByteBuffer words,
      ChannelPlan plan,
      int first,
      int n,
      long src,
      long dst,
      int type,
      int op,
      int nRanks,
      long recvData,
      int blocks,
      long sendStep,
      long recvStep) {
    int at = CALLS;
    for (int i = first; i < first + n; i++) {
      PrimitiveCall c = plan.calls().get(i);
      words.putLong(at, c.kind().ordinal());
      words.putLong(at + 8, c.srcOffset());
      words.putLong(at + 16, c.dstOffset());
      words.putLong(at + 24, c.bytes());
      at += PlanEncoding.WORDS * Long.BYTES;
    }
    words.putLong(N_CALLS, n);
    words.putLong(SRC, src);
    words.putLong(DST, dst);
    words.putLong(TYPE, type | ((long) op << 8));
    words.putLong(N_RANKS, nRanks);
    words.putLong(RECV_DATA, recvData);
    words.putLong(BLOCKS, blocks);
    words.putLong(SEND_STEP, sendStep);
    words.putLong(RECV_STEP, recvStep);
  }

  /** Tells the kernel to return instead of waiting for another plan. */
  void shutdown() {
    LONGS.setVolatile(words, SHUTDOWN, 1L);
  }

  /** The kernel's view of the mailbox. */
  CUdeviceptr devicePointer() {
    return memory.devicePointer(0);
  }

  @Override
  public void close() {
    memory.close();
  }
}
