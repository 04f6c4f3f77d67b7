package org.sparkccl.transport.p2p;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;

/**
 * The CPU side of the direct ring edges: which edges stay on the host, what the ranks tell each
 * other about them, and the {@code p2p} key.
 */
@DisplayName("direct ring edges between ranks of one host")
class SameHostEdgesTest {
  private static SameHostInfo rank(String host, String gpu, boolean p2p) {
    return new SameHostInfo(host, 100, gpu, p2p);
  }

  @Test
  @DisplayName("an edge is peer on one host when the GPUs reach each other and p2p allows it")
  void peerNeedsOneHostReachAndP2p() {
    SameHostInfo a = rank("boot:x", "0000:19:00.0", true);
    SameHostInfo b = rank("boot:x", "0000:3b:00.0", true);
    assertEquals(EdgeKind.PEER, EdgeKind.of(a, b, true));
    assertEquals(EdgeKind.SHM, EdgeKind.of(a, b, false), "GPUs that cannot reach each other");
    assertEquals(
        EdgeKind.SHM, EdgeKind.of(a, rank("boot:x", "0000:3b:00.0", false), true), "p2p=off");
    assertEquals(
        EdgeKind.SHM, EdgeKind.of(rank("boot:x", "0000:19:00.0", false), b, true), "p2p=off");
    assertEquals(EdgeKind.NET, EdgeKind.of(a, rank("boot:y", "0000:3b:00.0", true), true));
    assertEquals(EdgeKind.NET, EdgeKind.of(a, rank("boot:x", "", true), true), "a host kernel");
    assertEquals(EdgeKind.NET, EdgeKind.of(rank("boot:x", "", true), b, true), "a host kernel");
    assertTrue(EdgeKind.PEER.direct() && EdgeKind.SHM.direct());
    assertFalse(EdgeKind.NET.direct());
  }

  @Test
  @DisplayName("both ends of every ring edge decide the same, whatever the ranks' hosts")
  void bothEndsAgree() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int trial = 0; trial < 200; trial++) {
      int n = 2 + rnd.nextInt(7);
      SameHostInfo[] ranks = new SameHostInfo[n];
      boolean[] reaches = new boolean[n];
      for (int r = 0; r < n; r++) {
        ranks[r] =
            rank(
                "boot:" + rnd.nextInt(2),
                rnd.nextInt(5) == 0 ? "" : "gpu" + rnd.nextInt(3),
                rnd.nextBoolean());
        reaches[r] = rnd.nextBoolean();
      }
      for (int r = 0; r < n; r++) {
        int next = (r + 1) % n;
        // the sender decides from its own view, the receiver from the sender's published answer
        SameHostInfo senderSide = SameHostInfo.decode(ranks[r].encode());
        SameHostInfo receiverSide = SameHostInfo.decode(ranks[next].encode());
        EdgeKind atSender = EdgeKind.of(ranks[r], receiverSide, reaches[r]);
        EdgeKind atReceiver = EdgeKind.of(senderSide, ranks[next], reaches[r]);
        assertEquals(atSender, atReceiver, "edge " + r + "->" + next + " of " + n);
        boolean oneHost =
            ranks[r].host().equals(ranks[next].host())
                && !ranks[r].deviceId().isEmpty()
                && !ranks[next].deviceId().isEmpty();
        assertEquals(oneHost, atSender.direct(), "edge " + r + "->" + next);
      }
    }
  }

  @Test
  @DisplayName("a rank's same-host description and FIFO handles survive the bootstrap's bytes")
  void encodingsRoundTrip() {
    SplittableRandom rnd = new SplittableRandom(11);
    for (int i = 0; i < 50; i++) {
      SameHostInfo info =
          new SameHostInfo(
              "boot:" + Long.toHexString(rnd.nextLong()) + "/shm:" + rnd.nextInt(),
              rnd.nextLong(1, Long.MAX_VALUE),
              String.format("0000:%02x:00.0", rnd.nextInt(256)),
              rnd.nextBoolean());
      assertEquals(info, SameHostInfo.decode(info.encode()));
      byte[] ipc = new byte[FifoHandle.IPC_HANDLE_BYTES];
      for (int k = 0; k < ipc.length; k++) {
        ipc[k] = (byte) rnd.nextInt();
      }
      boolean peer = rnd.nextBoolean();
      FifoHandle h =
          new FifoHandle(
              peer ? EdgeKind.PEER : EdgeKind.SHM,
              rnd.nextLong(1, Long.MAX_VALUE),
              1024 << rnd.nextInt(10),
              "/dev/shm/sparkccl-" + Long.toHexString(rnd.nextLong()) + "-r1-c0",
              info.deviceId(),
              peer ? ipc : new byte[0]);
      FifoHandle back = FifoHandle.decode(h.encode());
      assertEquals(h, back);
      assertArrayEquals(h.ipcHandle(), back.ipcHandle());
    }
  }

  @Test
  @DisplayName("a rank's handles for every channel travel as one message; a failure says so")
  void channelHandlesRoundTrip() {
    SplittableRandom rnd = new SplittableRandom(13);
    byte[] ipc = new byte[FifoHandle.IPC_HANDLE_BYTES];
    for (int k = 0; k < ipc.length; k++) {
      ipc[k] = (byte) rnd.nextInt();
    }
    FifoHandle[] handles = new FifoHandle[5];
    for (int c = 0; c < handles.length; c++) {
      handles[c] =
          c == 3
              ? null // a channel without a direct edge
              : new FifoHandle(
                  c % 2 == 0 ? EdgeKind.PEER : EdgeKind.SHM,
                  rnd.nextLong(1, 1L << 40),
                  4096 << c,
                  "/dev/shm/sparkccl-" + Long.toHexString(rnd.nextLong()) + "-r2-c" + c,
                  "0000:19:00.0",
                  c % 2 == 0 ? ipc : new byte[0]);
    }
    byte[] msg = ChannelHandles.encode(handles);
    assertArrayEquals(handles, ChannelHandles.decode(msg, handles.length));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ChannelHandles.decode(msg, 4));
    assertTrue(e.getMessage().contains("5 channels"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ChannelHandles.decode(ChannelHandles.failed(), handles.length));
    assertTrue(e.getMessage().contains("failed"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> ChannelHandles.decode(Arrays.copyOf(msg, msg.length - 1), handles.length));
  }

  @Test
  @DisplayName("malformed descriptions and handles are refused with what was wrong")
  void malformedBytesAreRefused() {
    byte[] info = new SameHostInfo("boot:a", 1, "gpu", true).encode();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> SameHostInfo.decode(Arrays.copyOf(info, info.length - 1)));
    assertTrue(e.getMessage().contains("malformed"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> SameHostInfo.decode(Arrays.copyOf(info, info.length + 3)));
    byte[] h = new FifoHandle(EdgeKind.PEER, 5, 4096, "/dev/shm/x", "gpu", new byte[64]).encode();
    assertThrows(
        IllegalArgumentException.class, () -> FifoHandle.decode(Arrays.copyOf(h, h.length - 2)));
    h[0] = (byte) EdgeKind.NET.ordinal();
    e = assertThrows(IllegalArgumentException.class, () -> FifoHandle.decode(h));
    assertTrue(e.getMessage().contains("kind"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> new FifoHandle(EdgeKind.PEER, 5, 4096, "/dev/shm/x", "gpu", new byte[63]));
  }

  @Test
  @DisplayName("p2p is auto by default, off turns it off in all three forms, anything else fails")
  void p2pKey() {
    assertTrue(CclConfig.builder().build().p2p());
    assertFalse(CclConfig.fromMap(Map.of("p2p", "off")).p2p());
    assertTrue(CclConfig.fromMap(Map.of("p2p", "AUTO")).p2p());
    assertEquals("spark.ccl.p2p", Key.P2P.sparkConf());
    assertEquals("sparkccl.p2p", Key.P2P.systemProperty());
    assertEquals("SPARKCCL_P2P", Key.P2P.environmentVariable());
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> CclConfig.fromMap(Map.of("p2p", "on")));
    assertTrue(e.getMessage().contains("p2p=on") && e.getMessage().contains("off"), e.getMessage());
  }
}
