package org.sparkccl.memory;

import java.nio.ByteBuffer;

/**
 * Test-only child process for {@link DirectMemoryLimitTest}: run with a small {@code
 * -XX:MaxDirectMemorySize}, it allocates one buffer that fits and one that does not, and prints
 * what each gave.
 */
public final class DirectMemoryLimitMain {
  private DirectMemoryLimitMain() {}

  public static void main(String[] args) {
    int fits = Integer.parseInt(args[0]);
    int tooBig = Integer.parseInt(args[1]);
    ByteBuffer held = DirectMemory.allocate(fits);
    System.out.println("fits: " + held.capacity());
    try {
      DirectMemory.allocate(tooBig);
      System.out.println("too big: allocated");
    } catch (RuntimeException e) {
      System.out.println("too big: " + e.getClass().getName() + ": " + e.getMessage());
    }
    System.out.println("outstanding: " + DirectMemory.outstandingBytes());
    DirectMemory.free(held);
  }
}
