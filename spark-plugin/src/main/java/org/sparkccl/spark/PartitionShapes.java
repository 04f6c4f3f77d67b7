package org.sparkccl.spark;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.BarrierTaskContext;
import org.sparkccl.CclMismatchException;
import org.sparkccl.DataType;
import org.sparkccl.device.DeviceBuffer;

/**
 * Makes sure every partition of a barrier stage brings the same buffers (count and sizes) before
 * any rank starts a collective, so a disagreement fails every task with a message naming the
 * partitions (a {@link CclMismatchException}) instead of leaving some of them waiting. One
 * all-gather round ({@link TaskAllGather}).
 */
final class PartitionShapes {
  private PartitionShapes() {}

  /**
   * This partition's buffers in elements of {@code dtype}, as users size their arrays: {@code 2
   * buffer(s) of [100, 20] float32 elements ([400, 80] bytes)}.
   */
  static String describe(List<DeviceBuffer> buffers, DataType dtype) {
    String bytes =
        buffers.stream()
            .map(b -> Long.toString(b.byteSize()))
            .collect(Collectors.joining(", ", "[", "]"));
    if (buffers.stream().anyMatch(b -> b.byteSize() % dtype.size() != 0)) {
      return buffers.size() + " buffer(s) of " + bytes + " bytes, not whole " + dtype + " elements";
    }
    String elements =
        buffers.stream()
            .map(b -> Long.toString(b.byteSize() / dtype.size()))
            .collect(Collectors.joining(", ", "[", "]"));
    return buffers.size()
        + " buffer(s) of "
        + elements
        + " "
        + dtype
        + " elements ("
        + bytes
        + " bytes)";
  }

  /**
   * Exchanges this partition's description with every other partition and throws, in every task
   * alike, when they differ.
   */
  static void checkAgree(
      BarrierTaskContext context, String mine, String collective, java.time.Duration timeout) {
    byte[][] gathered =
        TaskAllGather.allGather(context, mine.getBytes(StandardCharsets.UTF_8), timeout);
    String[] all = new String[gathered.length];
    for (int p = 0; p < all.length; p++) {
      all[p] = new String(gathered[p], StandardCharsets.UTF_8);
    }
    Map<String, List<Integer>> byShape = new LinkedHashMap<>();
    for (int p = 0; p < all.length; p++) {
      byShape.computeIfAbsent(all[p], k -> new ArrayList<>()).add(p);
    }
    if (byShape.size() > 1) {
      String groups =
          byShape.entrySet().stream()
              .map(e -> "partition(s) " + e.getValue() + " hold " + e.getKey())
              .collect(Collectors.joining("; "));
      throw new CclMismatchException(
          "SparkCCL "
              + collective
              + ": the partitions disagree: "
              + groups
              + ". Every partition"
              + " must hold the same number of buffers with the same sizes.");
    }
  }
}
