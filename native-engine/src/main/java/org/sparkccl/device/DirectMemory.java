package org.sparkccl.device;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Allocates and frees direct (off-heap) memory and counts what is outstanding.
 *
 * <p>Java 17 has no public way to free a direct buffer before the garbage collector finds it (the
 * FFM {@code Arena} arrives in Java 22), so this class calls {@code sun.misc.Unsafe.invokeCleaner}
 * from the {@code jdk.unsupported} module, which needs no JVM flags. It is the only place in the
 * engine that does so.
 */
public final class DirectMemory {
  private static final AtomicLong OUTSTANDING = new AtomicLong();
  private static final sun.misc.Unsafe UNSAFE = loadUnsafe();

  private DirectMemory() {}

  /** A zeroed, native-order direct buffer of {@code bytes} bytes. */
  public static ByteBuffer allocate(int bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes=" + bytes + " is negative");
    }
    ByteBuffer b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    OUTSTANDING.addAndGet(bytes);
    return b;
  }

  /** Frees a buffer from {@link #allocate}; the buffer must not be used afterwards. */
  public static void free(ByteBuffer buffer) {
    OUTSTANDING.addAndGet(-buffer.capacity());
    UNSAFE.invokeCleaner(buffer);
  }

  /** Bytes allocated here and not yet freed, across the whole JVM. */
  public static long outstandingBytes() {
    return OUTSTANDING.get();
  }

  private static sun.misc.Unsafe loadUnsafe() {
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
