package org.sparkccl.config;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Parsers for configuration text: sizes with K, M, G suffixes, durations with ms, s, m suffixes,
 * numbers and enum names. Each error names the key, the value and what was expected.
 *
 * <pre>{@code
 * long bytes = Values.bytes("size", "64M"); // 67108864
 * }</pre>
 */
public final class Values {
  private Values() {}

  /** Parses {@code 4M}, {@code 512K}, {@code 1G} or a plain byte count. */
  public static long bytes(String key, String text) {
    String t = text.trim().toUpperCase(Locale.ROOT);
    if (t.endsWith("B")) {
      t = t.substring(0, t.length() - 1);
    }
    long mult = 1;
    if (t.endsWith("K")) {
      mult = 1L << 10;
    } else if (t.endsWith("M")) {
      mult = 1L << 20;
    } else if (t.endsWith("G")) {
      mult = 1L << 30;
    }
    if (mult != 1) {
      t = t.substring(0, t.length() - 1);
    }
    try {
      long v = Long.parseLong(t.trim());
      if (v < 0) {
        throw new NumberFormatException("negative");
      }
      return Math.multiplyExact(v, mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          key
              + "="
              + text
              + " is not a byte size; expected a number with an optional K, M or G suffix, e.g."
              + " 4M",
          e);
    }
  }

  /** Parses {@code 500ms}, {@code 30s}, {@code 2m} or a plain number of seconds. */
  public static Duration duration(String key, String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    try {
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
      } else if (t.endsWith("s")) {
        return Duration.ofMillis(
            Math.round(Double.parseDouble(t.substring(0, t.length() - 1).trim()) * 1000));
      } else if (t.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1).trim()));
      }
      return Duration.ofMillis(Math.round(Double.parseDouble(t) * 1000));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          key + "=" + text + " is not a duration; expected e.g. 500ms, 30s, 2m or 30", e);
    }
  }

  /** Parses a decimal integer. */
  public static int integer(String key, String text) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + "=" + text + " is not an integer", e);
    }
  }

  /** Parses {@code true} or {@code false}, ignoring case. */
  public static boolean bool(String key, String text) {
    String t = text.trim();
    if (t.equalsIgnoreCase("true")) {
      return true;
    } else if (t.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException(key + "=" + text + " is invalid; expected true or false");
  }

  /** Parses a decimal number. */
  public static double decimal(String key, String text) {
    try {
      return Double.parseDouble(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + "=" + text + " is not a number", e);
    }
  }

  /** Parses one of {@code choices} by name, ignoring case. */
  public static <E extends Enum<E>> E choice(String key, String text, E[] choices) {
    String t = text.trim();
    for (E e : choices) {
      if (e.name().equalsIgnoreCase(t)) {
        return e;
      }
    }
    String expected =
        Arrays.stream(choices).map(Values::lowerName).collect(Collectors.joining(", "));
    throw new IllegalArgumentException(
        key + "=" + text + " is invalid; expected one of " + expected);
  }

  /** An enum constant's name as configuration text: {@code SOCKET} is {@code socket}. */
  static String lowerName(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }
}
