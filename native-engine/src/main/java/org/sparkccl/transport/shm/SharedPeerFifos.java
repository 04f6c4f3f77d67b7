package org.sparkccl.transport.shm;

import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;
import org.apache.logging.log4j.Logger;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.kernel.PeerLiveness;
import org.sparkccl.kernel.SlotCalls;
import org.sparkccl.memory.SharedFile;
import org.sparkccl.util.EngineLog;

/**
 * The point-to-point FIFOs that ranks of one host share (NCCL's SHM transport for host memory):
 * each rank puts, in one file in {@code /dev/shm}, a FIFO for every other rank of its host that may
 * send to it; a sender maps the receiver's file and its kernel writes straight into the slots, and
 * the receiver's kernel reads them. No proxy thread, no socket and no second copy on the way.
 *
 * <p>The ranks agree in two bootstrap rounds that every rank of the communicator joins: the files
 * (path, slot size and for which senders, after the rank's process id: a wait on an edge asks
 * whether the other process still runs), then which receivers' files each sender mapped. A file
 * that cannot be made or mapped leaves its edges on sockets, on both ends alike. After the second
 * round the files lose their names; the memory goes when the last side unmaps it.
 *
 * <p>The file of a rank with {@code k} senders holds {@code k} regions, each a FIFO's control block
 * ({@link FifoLayout}), its slots' calls ({@link SharedSlotCalls}) and {@code STEPS} slots: a
 * {@link SharedFifoRegion}.
 */
public final class SharedPeerFifos implements AutoCloseable {
  private static final Logger LOG = EngineLog.logger(SharedPeerFifos.class);

  /** Round one starts with the rank's process id. */
  private static final int PID_BYTES = Long.BYTES;

  /** The largest slot: every page is written at creation, so the files stay small. */
  public static final int MAX_SLOT_BYTES = 64 << 10;

  private final int slotBytes;
  private final int stepSize;
  private final Fifo[] sends;
  private final Fifo[] recvs;
  private final SlotCalls[] sendCalls;
  private final SlotCalls[] recvCalls;
  private final PeerLiveness[] processes;
  private final List<SharedFile> files;

  /** Whether every rank sends to every other through shared memory (all ranks see the same). */
  private boolean complete;

  private SharedPeerFifos(int nRanks, int stepSize, int slotBytes, List<SharedFile> files) {
    this.stepSize = stepSize;
    this.slotBytes = slotBytes;
    this.sends = new Fifo[nRanks];
    this.recvs = new Fifo[nRanks];
    this.sendCalls = new SlotCalls[nRanks];
    this.recvCalls = new SlotCalls[nRanks];
    this.processes = new PeerLiveness[nRanks];
    this.files = files;
  }

  /** No shared FIFOs: every edge on sockets. */
  public static SharedPeerFifos none(int nRanks) {
    return new SharedPeerFifos(nRanks, 0, 0, List.of());
  }

  /** What a rank needs to take part. */
  public record Setup(
      Bootstrap bootstrap,
      Duration timeout,
      int rank,
      int nRanks,
      long token,
      int stepSize,
      boolean checks,
      LongFunction<CollectiveCall> myCalls) {}

  /** The slot size of shared FIFOs for FIFOs of {@code stepSize}. */
  public static int slotBytes(int stepSize) {
    return Math.min(stepSize, MAX_SLOT_BYTES);
  }

  /**
   * Joins the two rounds. Every rank of the communicator calls it at the same point.
   *
   * @param peers the ranks this rank would share memory with (same host, both allow it); all false
   *     when it would not
   * @return the shared FIFOs; a rank with none gets an empty set
   */
  public static SharedPeerFifos connect(Setup s, boolean[] peers) {
    int slot = slotBytes(s.stepSize());
    List<Integer> senders = new ArrayList<>();
    for (int r = 0; r < s.nRanks(); r++) {
      if (peers[r] && r != s.rank()) {
        senders.add(r);
      }
    }
    List<SharedFile> files = new ArrayList<>();
    SharedPeerFifos out = new SharedPeerFifos(s.nRanks(), s.stepSize(), slot, files);
    SharedFile inbound = null;
    byte[] published = new byte[0];
    if (!senders.isEmpty()) {
      Path path =
          SharedFile.DIRECTORY.resolve(
              String.format(
                  "sparkccl-%016x-p%d-%d", s.token(), s.rank(), ProcessHandle.current().pid()));
      try {
        inbound = SharedFile.create(path, SharedFifoRegion.bytes(slot) * senders.size());
        files.add(inbound);
        for (int i = 0; i < senders.size(); i++) {
          SharedFifoRegion.initialize(SharedFifoRegion.of(inbound, slot, i));
        }
        published = describe(path, slot, senders);
      } catch (UncheckedIOException e) {
        LOG.warn("rank {}: point-to-point messages stay on sockets: {}", s.rank(), e.getMessage());
      }
    }
    try {
      byte[] mine =
          ByteBuffer.allocate(PID_BYTES + published.length)
              .putLong(ProcessHandle.current().pid())
              .put(published)
              .array();
      byte[][] all = s.bootstrap().allGather(mine, s.timeout());
      byte[] mapped = new byte[s.nRanks()];
      for (int r = 0; r < s.nRanks(); r++) {
        if (peers[r] && r != s.rank() && all[r].length >= PID_BYTES) {
          ByteBuffer theirs = ByteBuffer.wrap(all[r]);
          out.processes[r] = PeerLiveness.of(theirs.getLong());
          if (theirs.hasRemaining()) {
            mapped[r] = (byte) (out.mapSendFifo(s, r, theirs.slice()) ? 1 : 0);
          }
        }
      }
      byte[][] maps = s.bootstrap().allGather(mapped, s.timeout());
      out.complete = everyPairMapped(maps);
      if (inbound != null) {
        inbound.unlink();
        for (int i = 0; i < senders.size(); i++) {
          int from = senders.get(i);
          if (maps[from].length == s.nRanks() && maps[from][s.rank()] == 1) {
            ByteBuffer region = SharedFifoRegion.of(inbound, slot, i);
            out.recvs[from] = SharedFifoRegion.fifo(region, slot);
            out.recvCalls[from] =
                new SharedSlotCalls(
                    SharedFifoRegion.calls(region), s.rank(), from, s.checks(), s.myCalls());
          }
        }
      }
      return out;
    } catch (RuntimeException e) {
      if (inbound != null) {
        inbound.unlink();
      }
      out.close();
      throw e;
    }
  }

  private static boolean everyPairMapped(byte[][] maps) {
    for (int r = 0; r < maps.length; r++) {
      for (int to = 0; to < maps.length; to++) {
        if (to != r && (maps[r].length != maps.length || maps[r][to] != 1)) {
          return false;
        }
      }
    }
    return true;
  }

  /** Round one's bytes: the slot size, the senders in order, the path. */
  private static byte[] describe(Path path, int slot, List<Integer> senders) {
    byte[] name = path.toString().getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(8 + 4 * senders.size() + name.length);
    b.putInt(slot).putInt(senders.size());
    senders.forEach(b::putInt);
    return b.put(name).array();
  }

  /** Maps rank {@code to}'s file for the region this rank sends into; false if it cannot. */
  private boolean mapSendFifo(Setup s, int to, ByteBuffer in) {
    try {
      int slot = in.getInt();
      int k = in.getInt();
      if (slot != slotBytes || k < 1 || k > s.nRanks()) {
        throw new IllegalArgumentException(
            "slots of " + slot + " bytes for " + k + " senders; this rank's are " + slotBytes);
      }
      int index = -1;
      for (int i = 0; i < k; i++) {
        if (in.getInt() == s.rank()) {
          index = i;
        }
      }
      if (index < 0) {
        return false; // it does not expect this rank
      }
      byte[] name = new byte[in.remaining()];
      in.get(name);
      Path path = Path.of(new String(name, StandardCharsets.UTF_8));
      SharedFile f = SharedFile.openPublished(path, SharedFifoRegion.bytes(slot) * k);
      files.add(f);
      ByteBuffer region = SharedFifoRegion.of(f, slot, index);
      sends[to] = SharedFifoRegion.fifo(region, slot);
      sendCalls[to] =
          new SharedSlotCalls(
              SharedFifoRegion.calls(region), s.rank(), to, s.checks(), s.myCalls());
      return true;
    } catch (UncheckedIOException | IllegalArgumentException | BufferUnderflowException e) {
      LOG.warn(
          "rank {}: messages to rank {} stay on sockets: cannot map its shared memory: {}",
          s.rank(),
          to,
          e.getMessage());
      return false;
    }
  }

  /**
   * Whether an edge of {@code bytes} fits: every slice of it (at most {@code stepSize}) fits a
   * slot. Both ends of an edge see the same bytes, so they agree.
   */
  public boolean carries(long bytes) {
    return bytes <= slotBytes || stepSize <= slotBytes;
  }

  /** The FIFO this rank writes for {@code peer}, or null when that edge is not shared. */
  public Fifo sendFifo(int peer) {
    return sends[peer];
  }

  /** The FIFO this rank reads from {@code peer}, or null when that edge is not shared. */
  public Fifo recvFifo(int peer) {
    return recvs[peer];
  }

  /**
   * The process of {@code peer} as this rank saw it at set-up, for waits on its edges to notice it
   * died; null where no edge with it is shared or this process cannot see it.
   */
  public PeerLiveness process(int peer) {
    return processes[peer];
  }

  public SlotCalls sendCalls(int peer) {
    return sendCalls[peer];
  }

  public SlotCalls recvCalls(int peer) {
    return recvCalls[peer];
  }

  /**
   * Whether every two ranks of the communicator share memory both ways: the same answer on every
   * rank, so collectives may choose their algorithm by it.
   */
  public boolean complete() {
    return complete;
  }

  /**
   * The largest edge that always fits ({@link #carries}); with {@link #complete()}, trees and
   * recursive doubling never touch a socket up to it.
   */
  public long carriesUpTo() {
    return slotBytes;
  }

  /** How many edges, both ways, go through shared memory. */
  public int edges() {
    int n = 0;
    for (int r = 0; r < sends.length; r++) {
      n += (sends[r] != null ? 1 : 0) + (recvs[r] != null ? 1 : 0);
    }
    return n;
  }

  /** Unmaps every file; no kernel may touch the FIFOs afterwards. Idempotent. */
  @Override
  public void close() {
    files.forEach(SharedFile::close);
  }
}
