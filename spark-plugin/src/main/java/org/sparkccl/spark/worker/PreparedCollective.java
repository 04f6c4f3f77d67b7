package org.sparkccl.spark.worker;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;

/**
 * A worker's collective request, parsed, with the views of its arrays, kept while the worker sends
 * the same bytes again: a training loop repeats one call on one array, and parsing the request
 * (names of the type and operator, segment views) cost a good part of a small call's overhead. The
 * session drops it when the request changes, a segment is released, a communicator closes or a call
 * fails.
 *
 * <pre>{@code
 * if (last == null || !last.sameRequest(body)) {
 *   last = PreparedCollective.parse(body, comm, segments);
 * }
 * last.run();
 * }</pre>
 */
final class PreparedCollective implements AutoCloseable {
  private final ByteBuffer request;
  private final Communicator comm;
  private final int kind;
  private final DataType dtype;
  private final ReduceOp op;
  private final int root;
  private final long count;
  private final HostBuffer send;
  private final HostBuffer recv;

  private PreparedCollective(
      ByteBuffer request,
      Communicator comm,
      int kind,
      DataType dtype,
      ReduceOp op,
      int root,
      long count,
      HostBuffer send,
      HostBuffer recv) {
    this.request = request;
    this.comm = comm;
    this.kind = kind;
    this.dtype = dtype;
    this.op = op;
    this.root = root;
    this.count = count;
    this.send = send;
    this.recv = recv;
  }

  /**
   * Parses the collective in {@code r} (from its position: the fields after the request's type and
   * released segments) on {@code comm}, with views of the worker's segments.
   *
   * @throws IllegalArgumentException for a bad type, operator, segment or range
   */
  static PreparedCollective parse(ByteBuffer r, Communicator comm, SharedSegments segments)
      throws IOException {
    ByteBuffer copy = ByteBuffer.allocate(r.remaining()).put(r.duplicate()).flip();
    r.getInt(); // the communicator's id: the caller looked it up
    int kind = r.get();
    DataType dtype = DataType.fromName(ChannelWire.getString(r));
    String opName = ChannelWire.getString(r);
    int root = r.getInt();
    long count = r.getLong();
    int sendSeg = r.getInt();
    long sendOff = r.getLong();
    long sendBytes = r.getLong();
    int recvSeg = r.getInt();
    long recvOff = r.getLong();
    long recvBytes = r.getLong();
    if (kind < ChannelProtocol.ALL_REDUCE || kind > ChannelProtocol.REDUCE_SCATTER) {
      throw new IOException("unknown collective " + kind);
    }
    boolean reduces = kind == ChannelProtocol.ALL_REDUCE || kind == ChannelProtocol.REDUCE_SCATTER;
    ReduceOp op = reduces ? ReduceOp.fromName(opName) : null;
    boolean inPlace = sendSeg == recvSeg && sendOff == recvOff && sendBytes == recvBytes;
    HostBuffer send = segments.view(sendSeg, sendOff, sendBytes);
    HostBuffer recv;
    try {
      recv = inPlace ? send : segments.view(recvSeg, recvOff, recvBytes);
    } catch (RuntimeException e) {
      send.close();
      throw e;
    }
    return new PreparedCollective(copy, comm, kind, dtype, op, root, count, send, recv);
  }

  /** Whether {@code body} (from its position) holds the bytes this was parsed from. */
  boolean sameRequest(ByteBuffer body) {
    return request.mismatch(body) == -1;
  }

  /** The communicator it runs on. */
  Communicator comm() {
    return comm;
  }

  /** Runs the collective, blocking. */
  void run() {
    DeviceBuffer out = recv;
    switch (kind) {
      case ChannelProtocol.ALL_REDUCE -> comm.allReduce(send, out, count, dtype, op);
      case ChannelProtocol.BROADCAST -> comm.broadcast(send, out, count, dtype, root);
      case ChannelProtocol.ALL_GATHER -> comm.allGather(send, out, count, dtype);
      default -> comm.reduceScatter(send, out, count, dtype, op);
    }
  }

  /** Closes the views (the segments stay mapped). */
  @Override
  public void close() {
    send.close();
    if (recv != send) {
      recv.close();
    }
  }
}
