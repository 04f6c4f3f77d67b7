package org.sparkccl.device;

import java.util.Locale;

/**
 * The {@code device} setting: {@code host}, {@code auto} (the first GPU when the CUDA backend is
 * available, the host otherwise), {@code cuda} (GPU 0) or {@code cuda:N}. {@link Devices} turns it
 * into a {@link Device}.
 *
 * <pre>{@code
 * DeviceSpec gpu = DeviceSpec.parse("cuda:1"); // kind CUDA, ordinal 1
 * }</pre>
 *
 * @param ordinal the GPU's number for {@link Kind#CUDA}, else 0
 */
public record DeviceSpec(Kind kind, int ordinal) {
  /** Where a communicator's kernels run. */
  public enum Kind {
    HOST,
    AUTO,
    CUDA
  }

  public static final DeviceSpec HOST = new DeviceSpec(Kind.HOST, 0);
  public static final DeviceSpec AUTO = new DeviceSpec(Kind.AUTO, 0);

  public DeviceSpec {
    if (kind == null || ordinal < 0 || (kind != Kind.CUDA && ordinal != 0)) {
      throw new IllegalArgumentException("device " + kind + ":" + ordinal + " is invalid");
    }
  }

  /** Parses {@code host}, {@code auto}, {@code cuda} or {@code cuda:N}, ignoring case. */
  public static DeviceSpec parse(String text) {
    String s = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
    return switch (s) {
      case "host" -> HOST;
      case "auto" -> AUTO;
      case "cuda" -> new DeviceSpec(Kind.CUDA, 0);
      default -> {
        if (!s.matches("cuda:\\d{1,4}")) {
          throw new IllegalArgumentException(
              "device=" + text + " is invalid; expected host, cuda, cuda:N or auto");
        }
        yield new DeviceSpec(Kind.CUDA, Integer.parseInt(s.substring(5)));
      }
    };
  }

  @Override
  public String toString() {
    return kind == Kind.CUDA ? "cuda:" + ordinal : kind.name().toLowerCase(Locale.ROOT);
  }
}
