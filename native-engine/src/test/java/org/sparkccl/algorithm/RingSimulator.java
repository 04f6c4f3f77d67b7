package org.sparkccl.algorithm;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.sparkccl.fifo.FifoLayout;

/**
 * Runs one ring collective's plans, every rank's and every channel's, against each other on
 * symbolic data. An element is not a number but a record of which input element it comes from,
 * which ranks' contributions it holds and how often, and how many final reductions (where {@code
 * avg} divides) it went through. Ranks exchange slices through FIFOs of {@link FifoLayout#STEPS}
 * slots, one slot per slice of at most {@code stepSize} bytes, as the channel kernels do; a rank
 * whose next primitive finds no data to receive or no slot to send into waits. One FIFO per link is
 * the least room a transport guarantees (its proxy may hold nothing in flight), and the room the
 * planners are designed for.
 *
 * <p>The primitives' effects are written here from their definitions, independently of the kernels,
 * so the checks below catch a plan that deadlocks, sends slices its successor does not expect,
 * reduces an element twice, with another element or after its final reduction, reads a buffer
 * position nothing has written, or lets two channels touch the same element.
 */
final class RingSimulator {
  /** Bits per rank in {@link Sym#ranks}: up to 127 contributions of one rank stay exact. */
  private static final int RANK_BITS = 7;

  private static final int MAX_PROBLEMS = 10;

  /**
   * One element's value: input element {@code id}, the sum over contributing ranks {@code r} of
   * {@code 2^(7r)} (so multiplicities show), the number of contributions, and the number of final
   * reductions applied.
   */
  record Sym(long id, long ranks, int terms, int finals) {
    static Sym input(long id, int rank) {
      return new Sym(id, 1L << (RANK_BITS * rank), 1, 0);
    }

    /** What a correct reduction of element {@code id} over {@code n} ranks holds. */
    static Sym reduced(long id, int n) {
      long all = 0;
      for (int r = 0; r < n; r++) {
        all += 1L << (RANK_BITS * r);
      }
      return new Sym(id, all, n, 1);
    }
  }

  /** One rank's buffers; {@code src == dst} for in-place calls. Null entries are unwritten. */
  static final class Buffers {
    final Sym[] src;
    final Sym[] dst;
    private final int[] srcChannel;
    private final int[] dstChannel;

    Buffers(Sym[] src, Sym[] dst) {
      this.src = src;
      this.dst = dst;
      this.srcChannel = new int[src.length];
      Arrays.fill(srcChannel, -1);
      if (src == dst) {
        this.dstChannel = srcChannel;
      } else {
        this.dstChannel = new int[dst.length];
        Arrays.fill(dstChannel, -1);
      }
    }
  }

  /** A rank's plan for one channel's part, elements {@code [start, start + len)}. */
  @FunctionalInterface
  interface Planner {
    ChannelPlan plan(int channel, int rank, long start, long len);
  }

  /** Where a problem was found; only spelled out when there is one. */
  private record Who(int rank, int channel, Primitive kind) {
    @Override
    public String toString() {
      return "rank " + rank + ", channel " + channel + ", " + kind + ": ";
    }
  }

  /** A kernel's unit of work: one FIFO slot's worth of a primitive, in elements. */
  private record Slice(Primitive kind, long src, long dst, int elems, int bytes) {}

  private final int nRanks;
  private final int elemSize;
  private final int stepSize;
  private final Buffers[] buffers;
  private final long everyRank;
  private final List<String> problems = new ArrayList<>();

  private RingSimulator(int nRanks, int elemSize, int stepSize, Buffers[] buffers) {
    this.nRanks = nRanks;
    this.elemSize = elemSize;
    this.stepSize = stepSize;
    this.buffers = buffers;
    this.everyRank = Sym.reduced(0, nRanks).ranks();
  }

  /**
   * Plans and runs every channel of a collective over {@code perRankCount} elements, split among
   * {@code channels} channels by {@link ChannelSplit}, as the launcher does. Returns what went
   * wrong (empty when nothing did); the buffers hold the results.
   */
  static List<String> run(
      int nRanks,
      int channels,
      long perRankCount,
      int elemSize,
      int stepSize,
      Planner planner,
      Buffers[] buffers) {
    RingSimulator sim = new RingSimulator(nRanks, elemSize, stepSize, buffers);
    for (int c = 0; c < channels && sim.problems.size() < MAX_PROBLEMS; c++) {
      long start = ChannelSplit.start(perRankCount, elemSize, channels, c);
      long len = ChannelSplit.length(perRankCount, elemSize, channels, c);
      ChannelPlan[] plans = new ChannelPlan[nRanks];
      for (int r = 0; r < nRanks; r++) {
        plans[r] = planner.plan(c, r, start, len);
      }
      sim.runChannel(c, plans);
    }
    return sim.problems;
  }

  private void problem(String s) {
    if (problems.size() < MAX_PROBLEMS) {
      problems.add(s);
    }
  }

  private List<Slice> slices(int channel, int rank, ChannelPlan plan) {
    String who = "rank " + rank + ", channel " + channel + ": ";
    if (plan.channel() != channel) {
      problem(who + "plan says channel " + plan.channel());
    }
    List<Slice> out = new ArrayList<>();
    long sends = 0;
    long recvs = 0;
    for (PrimitiveCall call : plan.calls()) {
      if (call.bytes() <= 0
          || call.bytes() % elemSize != 0
          || call.srcOffset() % elemSize != 0
          || call.dstOffset() % elemSize != 0) {
        problem(who + call + " is empty or not aligned to whole " + elemSize + "-byte elements");
        continue;
      }
      // The kernel walks a call in slices of one FIFO slot; a slot must end on an element.
      for (long done = 0; done < call.bytes(); done += stepSize) {
        int bytes = (int) Math.min(stepSize, call.bytes() - done);
        out.add(
            new Slice(
                call.kind(),
                (call.srcOffset() + done) / elemSize,
                (call.dstOffset() + done) / elemSize,
                bytes / elemSize,
                bytes));
        sends += call.kind().sends() ? 1 : 0;
        recvs += call.kind().receives() ? 1 : 0;
      }
    }
    if (plan.sendSteps() != sends || plan.recvSteps() != recvs) {
      problem(
          who
              + "the plan announces "
              + plan.sendSteps()
              + " send and "
              + plan.recvSteps()
              + " receive steps to the proxy, its calls take "
              + sends
              + " and "
              + recvs);
    }
    return out;
  }

  private void runChannel(int channel, ChannelPlan[] plans) {
    List<List<Slice>> work = new ArrayList<>();
    for (int r = 0; r < nRanks; r++) {
      work.add(slices(channel, r, plans[r]));
    }
    checkPairs(channel, work);
    // fifo[r]: from rank r to rank r+1, at most STEPS slots filled, as the kernel's send FIFO
    List<ArrayDeque<Sym[]>> fifo = new ArrayList<>();
    for (int r = 0; r < nRanks; r++) {
      fifo.add(new ArrayDeque<>());
    }
    int[] next = new int[nRanks];
    int finished = 0;
    while (finished < nRanks && problems.isEmpty()) {
      boolean progress = false;
      finished = 0;
      for (int r = 0; r < nRanks; r++) {
        List<Slice> mine = work.get(r);
        if (next[r] == mine.size()) {
          finished++;
          continue;
        }
        Slice s = mine.get(next[r]);
        ArrayDeque<Sym[]> in = fifo.get(Math.floorMod(r - 1, nRanks));
        ArrayDeque<Sym[]> out = fifo.get(r);
        if ((s.kind().receives() && in.isEmpty())
            || (s.kind().sends() && out.size() >= FifoLayout.STEPS)) {
          continue;
        }
        execute(channel, r, s, s.kind().receives() ? in.poll() : null, out);
        next[r]++;
        progress = true;
      }
      if (!progress && finished < nRanks) {
        StringBuilder where = new StringBuilder("channel " + channel + ": the ring deadlocks;");
        for (int r = 0; r < nRanks; r++) {
          where
              .append(" rank ")
              .append(r)
              .append(" at slice ")
              .append(next[r])
              .append('/')
              .append(work.get(r).size())
              .append(" (")
              .append(fifo.get(r).size())
              .append(" slots to its successor filled)");
        }
        problem(where.toString());
        return;
      }
    }
    for (int r = 0; r < nRanks && problems.isEmpty(); r++) {
      if (!fifo.get(r).isEmpty()) {
        problem(
            "channel "
                + channel
                + ": rank "
                + r
                + " sent "
                + fifo.get(r).size()
                + " slices its successor never received");
      }
    }
  }

  /** Rank r's sends, slice by slice, must be exactly rank r+1's receives: count and sizes. */
  private void checkPairs(int channel, List<List<Slice>> work) {
    for (int r = 0; r < nRanks; r++) {
      int succ = (r + 1) % nRanks;
      List<Integer> sent =
          work.get(r).stream().filter(s -> s.kind().sends()).map(Slice::bytes).toList();
      List<Integer> received =
          work.get(succ).stream().filter(s -> s.kind().receives()).map(Slice::bytes).toList();
      if (!sent.equals(received)) {
        problem(
            "channel "
                + channel
                + ": rank "
                + r
                + " sends slices of "
                + abbreviate(sent)
                + " bytes, rank "
                + succ
                + " receives "
                + abbreviate(received));
      }
    }
  }

  private static String abbreviate(List<Integer> sizes) {
    return sizes.size() <= 12
        ? sizes.toString()
        : sizes.subList(0, 12) + "... (" + sizes.size() + " slices)";
  }

  private void execute(int channel, int rank, Slice s, Sym[] in, ArrayDeque<Sym[]> out) {
    Who who = new Who(rank, channel, s.kind());
    if (in != null && in.length != s.elems()) {
      problem(who + "received " + in.length + " elements where it expected " + s.elems());
      return;
    }
    Sym[] sent = null;
    try {
      switch (s.kind()) {
        case SEND -> sent = read(who, channel, rank, s);
        case COPY_SEND -> {
          sent = read(who, channel, rank, s);
          write(channel, rank, s, sent);
        }
        case RECV -> write(channel, rank, s, in);
        case RECV_REDUCE_SEND -> sent = reduce(who, in, read(who, channel, rank, s), false);
        case RECV_REDUCE_COPY ->
            write(channel, rank, s, reduce(who, in, read(who, channel, rank, s), true));
        case RECV_REDUCE_COPY_SEND -> {
          sent = reduce(who, in, read(who, channel, rank, s), true);
          write(channel, rank, s, sent);
        }
        case RECV_COPY_SEND -> {
          write(channel, rank, s, in);
          sent = in;
        }
      }
    } catch (IndexOutOfBoundsException e) {
      problem(who + "reaches outside its buffer: " + s);
      return;
    }
    if (s.kind().sends()) {
      out.add(sent);
    }
  }

  private Sym[] read(Who who, int channel, int rank, Slice s) {
    Buffers b = buffers[rank];
    Sym[] v = new Sym[s.elems()];
    for (int i = 0; i < s.elems(); i++) {
      int at = Math.toIntExact(s.src() + i);
      claim(b.srcChannel, at, channel, rank, "source");
      v[i] = b.src[at];
      if (v[i] == null) {
        problem(who + "reads source element " + at + ", which nothing has written");
        v[i] = new Sym(-1, 0, 0, 0);
      }
    }
    return v;
  }

  private void write(int channel, int rank, Slice s, Sym[] v) {
    Buffers b = buffers[rank];
    for (int i = 0; i < s.elems(); i++) {
      int at = Math.toIntExact(s.dst() + i);
      claim(b.dstChannel, at, channel, rank, "destination");
      b.dst[at] = v[i];
    }
  }

  /** Channels run concurrently: one element touched by two of them would be a race. */
  private void claim(int[] owner, int at, int channel, int rank, String which) {
    if (owner[at] != -1 && owner[at] != channel) {
      problem(
          "rank "
              + rank
              + ": channels "
              + owner[at]
              + " and "
              + channel
              + " both touch "
              + which
              + " element "
              + at);
    }
    owner[at] = channel;
  }

  private Sym[] reduce(Who who, Sym[] in, Sym[] own, boolean isFinal) {
    Sym[] v = new Sym[in.length];
    for (int i = 0; i < in.length; i++) {
      Sym a = in[i];
      Sym b = own[i];
      if (a.id() != b.id()) {
        problem(who + "reduces element " + a.id() + " with element " + b.id());
      }
      if (a.finals() != 0 || b.finals() != 0) {
        problem(who + "reduces element " + a.id() + " again after its final reduction");
      }
      Sym sum = new Sym(a.id(), a.ranks() + b.ranks(), a.terms() + b.terms(), 0);
      if (isFinal) {
        if (sum.ranks() != everyRank || sum.terms() != nRanks) {
          problem(
              who
                  + "finishes element "
                  + a.id()
                  + " with "
                  + sum.terms()
                  + " contributions (rank mask "
                  + Long.toHexString(sum.ranks())
                  + "), not one from each of "
                  + nRanks
                  + " ranks");
        }
        sum = new Sym(sum.id(), sum.ranks(), sum.terms(), 1);
      }
      v[i] = sum;
    }
    return v;
  }
}
