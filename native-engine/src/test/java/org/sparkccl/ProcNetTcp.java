package org.sparkccl;

/** Reads the addresses of {@code /proc/net/tcp} and {@code /proc/net/tcp6}. */
final class ProcNetTcp {
  private ProcNetTcp() {}

  /**
   * {@code 0100007F:1F90} is {@code 127.0.0.1:8080}: each 32-bit word of the address is in the
   * machine's (little-endian) order. IPv4-mapped IPv6 addresses come out as IPv4; {@code ::} as
   * {@code 0.0.0.0}.
   */
  static String address(String hexAddressAndPort) {
    int colon = hexAddressAndPort.indexOf(':');
    String hex = hexAddressAndPort.substring(0, colon);
    int port = Integer.parseInt(hexAddressAndPort.substring(colon + 1), 16);
    if (hex.length() == 32) {
      if (hex.equals("00000000000000000000000000000000")) {
        return "0.0.0.0:" + port;
      }
      if (!hex.startsWith("0000000000000000FFFF0000")) {
        return "[ipv6 " + hex + "]:" + port;
      }
      hex = hex.substring(24);
    }
    long word = Long.parseLong(hex, 16);
    return (word & 0xff)
        + "."
        + ((word >> 8) & 0xff)
        + "."
        + ((word >> 16) & 0xff)
        + "."
        + ((word >> 24) & 0xff)
        + ":"
        + port;
  }
}
