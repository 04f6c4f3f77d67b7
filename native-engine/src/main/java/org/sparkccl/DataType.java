package org.sparkccl;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** Element types of collective buffers, named as on the perf tool's command line. */
public enum DataType {
  INT8("int8", 1, false, true),
  UINT8("uint8", 1, false, false),
  INT32("int32", 4, false, true),
  UINT32("uint32", 4, false, false),
  INT64("int64", 8, false, true),
  UINT64("uint64", 8, false, false),
  FLOAT16("float16", 2, true, true),
  BFLOAT16("bfloat16", 2, true, true),
  FLOAT32("float32", 4, true, true),
  FLOAT64("float64", 8, true, true);

  private final String wireName;
  private final int size;
  private final boolean floating;
  private final boolean signed;

  DataType(String wireName, int size, boolean floating, boolean signed) {
    this.wireName = wireName;
    this.size = size;
    this.floating = floating;
    this.signed = signed;
  }

  /** Bytes per element. */
  public int size() {
    return size;
  }

  public boolean isFloatingPoint() {
    return floating;
  }

  public boolean isSigned() {
    return signed;
  }

  /** The lower-case name used in configuration, logs and the perf tool ({@code float32}, ...). */
  public String wireName() {
    return wireName;
  }

  @Override
  public String toString() {
    return wireName;
  }

  /**
   * Parses a name such as {@code float32} or {@code bfloat16}.
   *
   * @throws IllegalArgumentException naming the accepted names when {@code name} is not one
   */
  public static DataType fromName(String name) {
    String wanted = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    for (DataType t : values()) {
      if (t.wireName.equals(wanted)) {
        return t;
      }
    }
    throw new IllegalArgumentException(
        "dtype=" + name + " is not a data type; expected one of " + names());
  }

  public static String names() {
    return Arrays.stream(values()).map(DataType::wireName).collect(Collectors.joining(", "));
  }
}
