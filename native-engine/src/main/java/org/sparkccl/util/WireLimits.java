package org.sparkccl.util;

import java.io.IOException;

/**
 * The check every length read from a connection passes before anything is allocated for it: a
 * stranger, a bug or a torn stream must get an error, never an allocation of what the wire says.
 */
public final class WireLimits {
  private WireLimits() {}

  /**
   * Returns {@code length} when it lies in {@code 0..max}.
   *
   * @throws LengthRefused naming {@code what} and the limit otherwise
   */
  public static int checkLength(int length, int max, String what) throws LengthRefused {
    if (length < 0 || length > max) {
      throw new LengthRefused(
          what + " announced " + length + " bytes; expected 0.." + max + " (refused unread)");
    }
    return length;
  }

  /** A length from the wire outside its limit: the stream cannot be trusted any further. */
  public static final class LengthRefused extends IOException {
    private static final long serialVersionUID = 1L;

    LengthRefused(String message) {
      super(message);
    }
  }
}
