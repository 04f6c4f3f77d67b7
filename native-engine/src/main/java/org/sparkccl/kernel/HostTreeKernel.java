package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;

/**
 * Tree collectives on host memory, slice by slice: reduce up (each rank adds its children's slices
 * to its own and sends the sum to its parent; the root completes it) and broadcast down (each rank
 * copies its parent's slice out and forwards it to its children). An allReduce does both with the
 * broadcast {@link #LAG} slices behind the reduction, so the two directions overlap without either
 * running far enough ahead to fill a FIFO.
 */
public final class HostTreeKernel {
  /** Slices the broadcast runs behind the reduction (well under the FIFO's 8 slots). */
  public static final int LAG = 2;

  private HostTreeKernel() {}

  /**
   * One tree collective. {@code up}: reduce towards the root; {@code down}: broadcast from it.
   * Edges not used by the directions asked for may be null or empty. It depends only on the
   * collective's shape: launches of the same shape reuse it, each with its own {@link
   * HostOperands}.
   */
  public record Work(
      boolean up,
      boolean down,
      PeerEdge toParent,
      PeerEdge fromParent,
      PeerEdge[] fromChildren,
      PeerEdge[] toChildren,
      long bytes,
      DataType type,
      int nRanks,
      int stepSize) {}

  public static void run(Work w, HostOperands o, KernelWaiter waiter, KernelGuard guard) {
    long slices = (w.bytes() + w.stepSize() - 1) / w.stepSize();
    long lag = w.up() && w.down() ? LAG : 0;
    for (long s = 0; s < slices + lag; s++) {
      if (w.up() && s < slices) {
        up(w, o, s, waiter, guard);
      }
      if (w.down() && s - lag >= 0 && s - lag < slices) {
        down(w, o, s - lag, waiter, guard);
      }
    }
    for (PeerEdge child : w.toChildren()) {
      // the caller may change its buffers once the collective returns
      child.awaitSent(Long.MAX_VALUE, waiter, guard, o.what);
    }
  }

  private static void up(
      Work w, HostOperands o, long slice, KernelWaiter waiter, KernelGuard guard) {
    int off = (int) (slice * w.stepSize());
    int len = (int) Math.min(w.stepSize(), w.bytes() - off);
    int elems = len / w.type().size();
    boolean root = w.toParent() == null;
    ByteBuffer out;
    int outOff;
    if (root) {
      out = o.dst;
      outOff = off;
    } else {
      out = w.toParent().awaitRoom(waiter, guard, o.what);
      outOff = 0;
    }
    ByteBuffer acc = o.src;
    int accOff = off;
    for (PeerEdge child : w.fromChildren()) {
      ByteBuffer in = child.awaitFilled(len, waiter, guard, o.what);
      Reducer.reduce(w.type(), o.op, in, 0, acc, accOff, out, outOff, elems);
      child.release();
      acc = out;
      accOff = outOff;
    }
    if (acc != out || accOff != outOff) {
      out.put(outOff, acc, accOff, len);
    }
    if (root) {
      if (o.op == ReduceOp.AVG) {
        Reducer.divide(w.type(), out, outOff, elems, w.nRanks());
      }
    } else {
      w.toParent().publish(len);
    }
  }

  private static void down(
      Work w, HostOperands o, long slice, KernelWaiter waiter, KernelGuard guard) {
    int off = (int) (slice * w.stepSize());
    int len = (int) Math.min(w.stepSize(), w.bytes() - off);
    // children are sent the slice from the output (from the input at a root that does not write
    // it), which nothing writes again in this collective; a parent's slot is copied out once
    ByteBuffer source;
    if (w.fromParent() == null) {
      source = w.up() ? o.dst : o.src;
      if (source != o.dst) {
        o.dst.put(off, source, off, len);
      }
    } else {
      o.dst.put(off, w.fromParent().awaitFilled(len, waiter, guard, o.what), 0, len);
      source = o.dst;
    }
    for (PeerEdge child : w.toChildren()) {
      child.send(source, off, len, waiter, guard, o.what);
    }
    if (w.fromParent() != null) {
      w.fromParent().release();
    }
  }
}
