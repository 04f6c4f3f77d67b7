package org.sparkccl;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Reduction operators. {@code AVG} is the sum divided by the number of ranks and is defined for
 * floating-point types only: an integer average would silently truncate.
 */
public enum ReduceOp {
  SUM("sum"),
  PROD("prod"),
  MIN("min"),
  MAX("max"),
  AVG("avg");

  private final String wireName;

  ReduceOp(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  @Override
  public String toString() {
    return wireName;
  }

  /** Whether this operator is defined for {@code type}. */
  public boolean supports(DataType type) {
    return this != AVG || type.isFloatingPoint();
  }

  /**
   * Parses a name such as {@code sum}.
   *
   * @throws IllegalArgumentException naming the accepted names when {@code name} is not one
   */
  public static ReduceOp fromName(String name) {
    String wanted = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    for (ReduceOp op : values()) {
      if (op.wireName.equals(wanted)) {
        return op;
      }
    }
    throw new IllegalArgumentException(
        "op="
            + name
            + " is not a reduction operator; expected one of "
            + Arrays.stream(values()).map(ReduceOp::wireName).collect(Collectors.joining(", ")));
  }
}
