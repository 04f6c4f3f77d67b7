package org.sparkccl.perf;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.sparkccl.CclException;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;

/** One rank process of the perf tool. */
final class PerfRank {
  private PerfRank() {}

  /** One output row, as nccl-tests prints it. */
  record Row(
      long size,
      long count,
      String type,
      String redop,
      int root,
      @JsonProperty("time_us") double timeUs,
      @JsonProperty("algbw_GBps") double algbw,
      @JsonProperty("busbw_GBps") double busbw,
      long wrong) {}

  static void validate(PerfOptions o) {
    if (!o.operation.equals("allreduce")) {
      throw new IllegalArgumentException(
          "-o " + o.operation + " is not supported yet; expected allreduce");
    }
    if (!o.transport.equals("socket")) {
      throw new IllegalArgumentException("-t " + o.transport + " is not supported; expected socket");
    }
    DataType type = DataType.fromName(o.dtype);
    ReduceOp op = ReduceOp.fromName(o.redop);
    if (!op.supports(type)) {
      throw new IllegalArgumentException(
          "-r " + op + " is not defined for -d " + type + "; expected a floating-point dtype");
    }
    if (o.ranks < 1 || o.minBytes < 1 || o.maxBytes < o.minBytes || o.factor < 2 || o.iters < 1
        || o.warmup < 0 || (o.check != 0 && o.check != 1)) {
      throw new IllegalArgumentException(
          "expected -n >= 1, 1 <= -b <= -e, -f >= 2, -i >= 1, -w >= 0, -c 0|1");
    }
    if (o.maxBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("-e " + o.maxBytes + " is too large; expected at most 2G");
    }
  }

  static int run(PerfOptions o) {
    validate(o);
    DataType type = DataType.fromName(o.dtype);
    ReduceOp op = ReduceOp.fromName(o.redop);
    CclConfig config = CclConfig.fromEnvironment();
    boolean lead = o.rank == 0;
    long wrongTotal = 0;
    List<Row> rows = new ArrayList<>();
    try (TcpBootstrap boot = TcpBootstrap.connect(o.root, o.rank, o.ranks, config.timeout());
        Communicator comm = Communicator.create(boot, config);
        HostBuffer send = HostDevice.INSTANCE.allocate(o.maxBytes);
        HostBuffer recv = HostDevice.INSTANCE.allocate(o.maxBytes)) {
      if (lead) {
        System.out.printf(
            "# sparkccl-perf: %s, %d ranks (one JVM each), transport %s, device host%n",
            o.operation, o.ranks, o.transport);
        System.out.println("# config: " + config);
        System.out.printf(
            "#%11s %12s %9s %6s %5s %11s %11s %11s %8s%n",
            "size", "count", "type", "redop", "root", "time_us", "algbw_GBps", "busbw_GBps",
            "wrong");
      }
      jitWarmup(comm, send, recv, o, type, op);
      for (long size = o.minBytes; size <= o.maxBytes; size *= o.factor) {
        long count = size / type.size();
        if (count == 0) {
          continue;
        }
        long bytes = count * type.size();
        TestData.fill(send.memory(), count, type, 1, o.rank);
        for (int i = 0; i < o.warmup; i++) {
          comm.allReduce(send, recv, count, type, op);
        }
        barrier(boot, config);
        long t0 = System.nanoTime();
        for (int i = 0; i < o.iters; i++) {
          comm.allReduce(send, recv, count, type, op);
        }
        double myUs = (System.nanoTime() - t0) / 1e3 / o.iters;
        double timeUs = maxOver(boot, config, myUs);
        long wrong = o.check == 1 ? check(comm, boot, config, send, recv, count, type, op, size) : 0;
        double algbw = bytes / timeUs / 1e3;
        double busbw = algbw * 2.0 * (o.ranks - 1) / o.ranks;
        Row row = new Row(bytes, count, type.wireName(), op.wireName(), -1, timeUs, algbw, busbw, wrong);
        rows.add(row);
        wrongTotal += wrong;
        if (lead) {
          System.out.printf(
              Locale.ROOT, "%12d %12d %9s %6s %5d %11.2f %11.4f %11.4f %8d%n", row.size(),
              row.count(), row.type(), row.redop(), row.root(), row.timeUs(), row.algbw(),
              row.busbw(), row.wrong());
          System.out.flush();
        }
      }
    } catch (CclException e) {
      System.err.println("sparkccl-perf: rank " + o.rank + ": " + e.getMessage());
      return 1;
    }
    if (lead) {
      double avg = rows.stream().mapToDouble(Row::busbw).average().orElse(0);
      System.out.printf(Locale.ROOT, "# Out of bounds values : %d %s%n", wrongTotal,
          wrongTotal == 0 ? "OK" : "FAILED");
      System.out.printf(Locale.ROOT, "# Avg bus bandwidth : %.4f%n", avg);
      if (o.json != null) {
        writeJson(o, rows, avg);
      }
    }
    return wrongTotal == 0 ? 0 : 3;
  }

  /**
   * Runs the engine's code paths until the JIT has compiled them: four JVMs compiling on two
   * cores would otherwise make the first sizes measure the interpreter (5 ms instead of 0.5 ms at
   * 8 B). Takes about a second; {@code --jit-warmup 0} skips it.
   */
  private static void jitWarmup(
      Communicator comm, HostBuffer send, HostBuffer recv, PerfOptions o, DataType type,
      ReduceOp op) {
    long small = Math.max(1, Math.min(o.maxBytes, 4096) / type.size());
    long large = Math.max(1, Math.min(o.maxBytes, 1 << 20) / type.size());
    TestData.fill(send.memory(), large, type, 7, o.rank);
    for (int i = 0; i < o.jitWarmup; i++) {
      comm.allReduce(send, recv, i % 20 == 19 ? large : small, type, op);
    }
  }

  private static long check(
      Communicator comm, TcpBootstrap boot, CclConfig config, HostBuffer send, HostBuffer recv,
      long count, DataType type, ReduceOp op, long seed) {
    TestData.fill(send.memory(), count, type, seed, boot.rank());
    comm.allReduce(send, recv, count, type, op);
    ByteBuffer[] inputs = new ByteBuffer[boot.nRanks()];
    for (int r = 0; r < inputs.length; r++) {
      inputs[r] = TestData.scratch(count * type.size());
      TestData.fill(inputs[r], count, type, seed, r);
    }
    long wrong = TestData.countWrong(recv.memory(), inputs, count, type, op);
    long total = 0;
    for (byte[] b : boot.allGather(ByteBuffer.allocate(8).putLong(wrong).array(), config.timeout())) {
      total += ByteBuffer.wrap(b).getLong();
    }
    return total;
  }

  private static void barrier(TcpBootstrap boot, CclConfig config) {
    boot.allGather(new byte[0], config.timeout());
  }

  private static double maxOver(TcpBootstrap boot, CclConfig config, double v) {
    double max = v;
    for (byte[] b : boot.allGather(ByteBuffer.allocate(8).putDouble(v).array(), config.timeout())) {
      max = Math.max(max, ByteBuffer.wrap(b).getDouble());
    }
    return max;
  }

  private static void writeJson(PerfOptions o, List<Row> rows, double avg) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("operation", o.operation);
    doc.put("ranks", o.ranks);
    doc.put("transport", o.transport);
    doc.put("rows", rows);
    doc.put("avgBusBandwidth", avg);
    try {
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(new File(o.json), doc);
    } catch (IOException e) {
      System.err.println("sparkccl-perf: cannot write " + o.json + ": " + e.getMessage());
    }
  }
}
