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
import org.sparkccl.fifo.LowLatencyFifo;
import org.sparkccl.fifo.SlotQueue;
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

  /** The edges to and from each peer under the simple protocol; null where not shared. */
  private final Lane[] sends;

  private final Lane[] recvs;

  /** The edges to and from each peer under the LL protocol; null where not shared or none. */
  private final Lane[] lowLatencySends;

  private final Lane[] lowLatencyRecvs;
  private final PeerLiveness[] processes;
  private final List<SharedFile> files;

  /** Whether every rank sends to every other through shared memory (all ranks see the same). */
  private boolean complete;

  /**
   * One direction of a shared edge under one protocol: its slots ({@link Fifo} or {@link
   * LowLatencyFifo}), the calls stamped on them, and the largest message the edge takes in one
   * slice under this protocol (both ends see the same: the receiver made the memory).
   */
  public record Lane(SlotQueue queue, SlotCalls calls, int slotBytes, boolean lowLatency) {}

  /**
   * The edge to ({@code send}) or from {@code peer} under the LL protocol ({@code lowLatency}) or
   * the simple one, whatever the size; null where there is none.
   */
  public Lane laneOf(boolean send, int peer, boolean lowLatency) {
    return lowLatency
        ? (send ? lowLatencySends : lowLatencyRecvs)[peer]
        : (send ? sends : recvs)[peer];
  }

  private SharedPeerFifos(int nRanks, int stepSize, int slotBytes, List<SharedFile> files) {
    this.stepSize = stepSize;
    this.slotBytes = slotBytes;
    this.sends = new Lane[nRanks];
    this.recvs = new Lane[nRanks];
    this.lowLatencySends = new Lane[nRanks];
    this.lowLatencyRecvs = new Lane[nRanks];
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
      int lowLatencyBytes,
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
        int ll = s.lowLatencyBytes();
        inbound = SharedFile.create(path, regionBytes(slot, ll) * senders.size());
        files.add(inbound);
        for (int i = 0; i < senders.size(); i++) {
          SharedFifoRegion.initialize(senderPart(inbound, slot, ll, i));
        }
        published = describe(path, slot, ll, senders);
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
            out.attach(s, from, inbound, s.lowLatencyBytes(), i, false);
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

  /** Round one's bytes: the slot size, the LL slots' size, the senders in order, the path. */
  private static byte[] describe(Path path, int slot, int lowLatency, List<Integer> senders) {
    byte[] name = path.toString().getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(12 + 4 * senders.size() + name.length);
    b.putInt(slot).putInt(lowLatency).putInt(senders.size());
    senders.forEach(b::putInt);
    return b.put(name).array();
  }

  /** Maps rank {@code to}'s file for the region this rank sends into; false if it cannot. */
  private boolean mapSendFifo(Setup s, int to, ByteBuffer in) {
    try {
      int slot = in.getInt();
      int lowLatency = in.getInt();
      int k = in.getInt();
      if (slot != slotBytes
          || lowLatency < 0
          || lowLatency > LowLatencyFifo.MAX_CAPACITY
          || k < 1
          || k > s.nRanks()) {
        throw new IllegalArgumentException(
            "slots of "
                + slot
                + " bytes (LL: "
                + lowLatency
                + ") for "
                + k
                + " senders; this rank's are "
                + slotBytes
                + " bytes");
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
      SharedFile f = SharedFile.openPublished(path, regionBytes(slot, lowLatency) * k);
      files.add(f);
      attach(s, to, f, lowLatency, index, true);
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

  /**
   * The edge to ({@code send}) or from {@code peer} for a message of {@code bytes}: under the LL
   * protocol where its slots hold the message whole, else under the simple one where every slice of
   * it fits ({@link #carries}); null when the edge is not shared or the message does not fit. Both
   * ends of an edge choose alike.
   */
  public Lane lane(boolean send, int peer, long bytes) {
    Lane ll = send ? lowLatencySends[peer] : lowLatencyRecvs[peer];
    if (ll != null && bytes <= ll.slotBytes()) {
      return ll;
    }
    Lane simple = send ? sends[peer] : recvs[peer];
    return simple != null && carries(bytes) ? simple : null;
  }

  /**
   * The process of {@code peer} as this rank saw it at set-up, for waits on its edges to notice it
   * died; null where no edge with it is shared or this process cannot see it.
   */
  public PeerLiveness process(int peer) {
    return processes[peer];
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

  /**
   * Bytes of the part of a file that one sender uses: the simple protocol's region ({@link
   * SharedFifoRegion}) and, with {@code lowLatency} above 0, the LL protocol's FIFO and its slots'
   * calls, in whole pages.
   */
  private static long regionBytes(int slot, int lowLatency) {
    return SharedFifoRegion.bytes(slot) + lowLatencyBytes(lowLatency);
  }

  private static long lowLatencyBytes(int lowLatency) {
    if (lowLatency == 0) {
      return 0;
    }
    return SharedFifoRegion.wholePages(LowLatencyFifo.bytes(lowLatency) + SharedSlotCalls.BYTES);
  }

  /**
   * Sender {@code index}'s part of {@code f}: the simple protocol's region from 0, the LL
   * protocol's FIFO and calls after it.
   */
  private static ByteBuffer senderPart(SharedFile f, int slot, int lowLatency, int index) {
    long stride = regionBytes(slot, lowLatency);
    return f.buffer().slice((int) (stride * index), (int) stride);
  }

  /**
   * Takes the edge to ({@code send}) or from {@code peer} whose memory is sender {@code index}'s
   * part of {@code f}: the simple protocol's lane and, where the file has one, the LL protocol's.
   */
  private void attach(Setup s, int peer, SharedFile f, int lowLatency, int index, boolean send) {
    ByteBuffer whole = senderPart(f, slotBytes, lowLatency, index);
    int simpleBytes = (int) SharedFifoRegion.bytes(slotBytes);
    ByteBuffer region = whole.slice(0, simpleBytes);
    Lane simple =
        new Lane(
            SharedFifoRegion.fifo(region, slotBytes),
            new SharedSlotCalls(
                SharedFifoRegion.calls(region), s.rank(), peer, s.checks(), s.myCalls()),
            slotBytes,
            false);
    Lane ll = null;
    if (lowLatency > 0) {
      ByteBuffer part = whole.slice(simpleBytes, (int) lowLatencyBytes(lowLatency));
      int fifoBytes = (int) LowLatencyFifo.bytes(lowLatency);
      LowLatencyFifo fifo = new LowLatencyFifo(part.slice(0, fifoBytes), lowLatency);
      SharedSlotCalls records =
          new SharedSlotCalls(
              part.slice(fifoBytes, SharedSlotCalls.BYTES),
              s.rank(),
              peer,
              s.checks(),
              s.myCalls());
      ll = new Lane(fifo, new LowLatencySlotCalls(fifo, records), lowLatency, true);
    }
    (send ? sends : recvs)[peer] = simple;
    (send ? lowLatencySends : lowLatencyRecvs)[peer] = ll;
  }

  /** Unmaps every file; no kernel may touch the FIFOs afterwards. Idempotent. */
  @Override
  public void close() {
    files.forEach(SharedFile::close);
  }
}
