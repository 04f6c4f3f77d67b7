package org.sparkccl.device.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.Primitive;
import org.sparkccl.algorithm.PrimitiveCall;
import org.sparkccl.algorithm.RingAllReduce;
import org.sparkccl.fifo.FifoLayout;

/**
 * The CUDA kernel's source repeats the FIFO layout and the ordinals of primitives, data types and
 * operators; this test holds the two sides together, and checks how a plan is encoded for it.
 */
@DisplayName("the contract between the Java engine and the CUDA kernel")
class CudaContractTest {
  private static Map<String, Long> defines() throws IOException {
    String src;
    try (InputStream in = CudaContractTest.class.getResourceAsStream("/cuda/sparkccl_kernels.cu")) {
      assertNotNull(in, "the kernel source is not on the class path");
      src = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Map<String, Long> out = new HashMap<>();
    Matcher m = Pattern.compile("(?m)^#define (\\w+) \\(?(-?\\d+)\\)?").matcher(src);
    while (m.find()) {
      out.put(m.group(1), Long.parseLong(m.group(2)));
    }
    return out;
  }

  @Test
  void theKernelSourceRepeatsTheFifoLayout() throws IOException {
    Map<String, Long> d = defines();
    assertEquals(FifoLayout.STEPS, d.get("FIFO_STEPS"));
    assertEquals(FifoLayout.HEAD_OFFSET, d.get("FIFO_HEAD_OFFSET"));
    assertEquals(FifoLayout.TAIL_OFFSET, d.get("FIFO_TAIL_OFFSET"));
    assertEquals(FifoLayout.ABORT_OFFSET, d.get("FIFO_ABORT_OFFSET"));
    assertEquals(FifoLayout.SIZES_OFFSET, d.get("FIFO_SIZES_OFFSET"));
    assertEquals(FifoLayout.CONTROL_BYTES, d.get("FIFO_CONTROL_BYTES"));
    assertEquals(FifoLayout.EMPTY, d.get("FIFO_EMPTY"));
  }

  @Test
  void theKernelSourceRepeatsTheOrdinals() throws IOException {
    Map<String, Long> d = defines();
    for (Primitive p : Primitive.values()) {
      assertEquals(p.ordinal(), d.get("P_" + p.name()), p.name());
    }
    for (DataType t : DataType.values()) {
      assertEquals(t.ordinal(), d.get("T_" + t.name()), t.name());
    }
    for (ReduceOp op : ReduceOp.values()) {
      assertEquals(op.ordinal(), d.get("OP_" + op.name()), op.name());
    }
  }

  @Test
  void theKernelSourceRepeatsTheResidentMailboxAndStatusWords() throws IOException {
    Map<String, Long> d = defines();
    assertEquals(ResidentMailbox.SEQ, 8 * d.get("MB_SEQ"));
    assertEquals(ResidentMailbox.N_CALLS, 8 * d.get("MB_NCALLS"));
    assertEquals(ResidentMailbox.SRC, 8 * d.get("MB_SRC"));
    assertEquals(ResidentMailbox.DST, 8 * d.get("MB_DST"));
    assertEquals(ResidentMailbox.TYPE, 8 * d.get("MB_TYPE"));
    assertEquals(ResidentMailbox.N_RANKS, 8 * d.get("MB_NRANKS"));
    assertEquals(ResidentMailbox.RECV_DATA, 8 * d.get("MB_RECVDATA"));
    assertEquals(ResidentMailbox.BLOCKS, 8 * d.get("MB_BLOCKS"));
    assertEquals(ResidentMailbox.SEND_STEP, 8 * d.get("MB_SENDSTEP"));
    assertEquals(ResidentMailbox.RECV_STEP, 8 * d.get("MB_RECVSTEP"));
    assertTrue(8 * d.get("MB_PLAN_WORDS") <= ResidentMailbox.SHUTDOWN);
    assertEquals(ResidentMailbox.SHUTDOWN, 8 * d.get("MB_SHUTDOWN"));
    assertEquals(ResidentMailbox.CALLS, d.get("MB_CALLS_BYTE"));
    assertEquals(CudaChannelKernel.DONE_SEQ, 4 * d.get("ST_DONE_SEQ"));
    assertEquals(CudaChannelKernel.RETURNED, 4 * d.get("ST_RETURNED"));
    assertEquals(CudaChannelKernel.LOCAL_SEND, d.get("LOCAL_SEND"));
    assertEquals(CudaChannelKernel.LOCAL_RECV, d.get("LOCAL_RECV"));
  }

  @Test
  void automaticBlocksAimAt64PerRankAndLeaveHalfTheSmsToOthers() {
    // an H200 has 132 SMs: 16 peer channels of one rank get 4 blocks each
    assertEquals(4, CudaChannelKernel.autoBlocks(132, 1, 16));
    // one channel: capped by cuda.blocks' maximum
    assertEquals(16, CudaChannelKernel.autoBlocks(132, 1, 1));
    // 8 ranks on one GPU with 4 channels each: 132 / (2 x 8 x 4) = 2
    assertEquals(2, CudaChannelKernel.autoBlocks(132, 8, 4));
    // more channels than half the SMs allow: never fewer than 1
    assertEquals(1, CudaChannelKernel.autoBlocks(132, 4, 32));
    // every block of every rank fits in half of the SMs
    for (int ranks = 1; ranks <= 8; ranks++) {
      for (int ch = 1; ch <= 32; ch++) {
        int b = CudaChannelKernel.autoBlocks(132, ranks, ch);
        assertTrue(b == 1 || b * ch * ranks <= 66, ranks + " ranks, " + ch + " channels: " + b);
      }
    }
  }

  @Test
  void theBlocksCountersFitWhatTheHostZeroesBeforeEachLaunch() throws IOException {
    Map<String, Long> d = defines();
    assertEquals(CudaChannelKernel.SYNC_INTS, d.get("SYNC_INTS"));
    // the int64 words (block 0's decision and what its waits passed) are 8-byte aligned, apart
    // from each other and from the int counters, and inside the zeroed words
    // after the per-slot counters and the two of the grid, before the int64 words
    assertTrue(2 * FifoLayout.STEPS + 2 <= d.get("SYNC_PLAN_BLOCKS"));
    assertTrue(d.get("SYNC_PLAN_BLOCKS") < d.get("SYNC_DECISION"));
    long[] wide = {d.get("SYNC_DECISION"), d.get("SYNC_GO_SEND"), d.get("SYNC_GO_RECV")};
    for (int i = 0; i < wide.length; i++) {
      assertEquals(0, wide[i] % 2);
      if (i > 0) {
        assertTrue(wide[i - 1] + 2 <= wide[i]);
      }
    }
    assertTrue(wide[2] + 2 <= d.get("SYNC_FAIL"));
    assertTrue(d.get("SYNC_FAIL") < d.get("SYNC_INTS"));
  }

  @Test
  void aResidentPostHoldsTheCallsFromTheirOffsetAndTheArgumentsInTheirWords() {
    ChannelPlan plan = RingAllReduce.plan(1, 1, 3, 0, 10_001, 4, 8192);
    int first = 1;
    int n = plan.calls().size() - 1;
    java.nio.ByteBuffer words =
        java.nio.ByteBuffer.allocate(ResidentMailbox.CALLS + n * 32)
            .order(java.nio.ByteOrder.nativeOrder());
    ResidentMailbox.write(
        words, plan, first, n, 0x7000_0000_1000L, 0x7000_0002_0000L, 8, 4, 3, 77L, 5, 41L, 39L);
    assertEquals(n, words.getLong(ResidentMailbox.N_CALLS));
    assertEquals(0x7000_0000_1000L, words.getLong(ResidentMailbox.SRC));
    assertEquals(0x7000_0002_0000L, words.getLong(ResidentMailbox.DST));
    assertEquals(8 | 4 << 8, words.getLong(ResidentMailbox.TYPE));
    assertEquals(3, words.getLong(ResidentMailbox.N_RANKS));
    assertEquals(77L, words.getLong(ResidentMailbox.RECV_DATA));
    assertEquals(5, words.getLong(ResidentMailbox.BLOCKS));
    assertEquals(41L, words.getLong(ResidentMailbox.SEND_STEP));
    assertEquals(39L, words.getLong(ResidentMailbox.RECV_STEP));
    long[] expected = PlanEncoding.encode(plan);
    for (int w = 0; w < n * PlanEncoding.WORDS; w++) {
      assertEquals(
          expected[first * PlanEncoding.WORDS + w],
          words.getLong(ResidentMailbox.CALLS + w * Long.BYTES),
          "word " + w);
    }
  }

  @Test
  void aPlanIsEncodedAsFourWordsPerCallInOrder() {
    ChannelPlan plan = RingAllReduce.plan(0, 1, 3, 0, 10_001, 4, 8192);
    long[] words = PlanEncoding.encode(plan);
    assertEquals(plan.calls().size() * PlanEncoding.WORDS, words.length);
    int i = 0;
    for (PrimitiveCall c : plan.calls()) {
      assertArrayEquals(
          new long[] {c.kind().ordinal(), c.srcOffset(), c.dstOffset(), c.bytes()},
          java.util.Arrays.copyOfRange(words, i, i + PlanEncoding.WORDS));
      i += PlanEncoding.WORDS;
    }
  }
}
