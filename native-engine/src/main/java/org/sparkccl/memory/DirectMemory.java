package org.sparkccl.memory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Allocates and frees direct (off-heap) memory and counts what is outstanding.
 *
 * <p>Java 17 has no public way to free a direct buffer before the garbage collector finds it (the
 * FFM {@code Arena} arrives in Java 22), so this class calls {@code sun.misc.Unsafe.invokeCleaner}
 * from the {@code jdk.unsupported} module, which needs no JVM flags. It is the only place in the
 * engine that does so. The class is looked up by name rather than named in the source: javac warns
 * on every mention of {@code sun.misc.Unsafe} and offers no way to silence that one warning under
 * {@code --release}, while the build treats warnings as errors.
 */
public final class DirectMemory {
  private static final AtomicLong OUTSTANDING = new AtomicLong();
  private static final MethodHandle INVOKE_CLEANER = loadInvokeCleaner();

  private DirectMemory() {}

  /**
   * A zeroed, native-order direct buffer of {@code bytes} bytes.
   *
   * @throws IllegalStateException when the JVM's direct memory cannot hold it: an exception, not
   *     the JVM's {@code OutOfMemoryError}, so that a launch that needs a new FIFO fails its
   *     communicator (and so every rank) at once instead of escaping as an error that no one
   *     reports to the peers
   */
  public static ByteBuffer allocate(int bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes=" + bytes + " is negative");
    }
    ByteBuffer b;
    try {
      b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    } catch (OutOfMemoryError e) {
      throw new IllegalStateException(
          "direct memory exhausted: "
              + bytes
              + " bytes wanted, "
              + OUTSTANDING.get()
              + " held by SparkCCL in this JVM ("
              + e.getMessage()
              + "). Every ring channel and point-to-point link holds a FIFO of buffSize bytes:"
              + " lower buffSize or raise the JVM's -XX:MaxDirectMemorySize",
          e);
    }
    OUTSTANDING.addAndGet(bytes);
    return b;
  }

  /** Frees a buffer from {@link #allocate}; the buffer must not be used afterwards. */
  public static void free(ByteBuffer buffer) {
    OUTSTANDING.addAndGet(-buffer.capacity());
    try {
      INVOKE_CLEANER.invokeExact(buffer);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("freeing a direct buffer failed", e);
    }
  }

  /**
   * Unmaps a buffer of {@code FileChannel.map} now instead of whenever the garbage collector finds
   * it: memory shared with another process through a file is then returned as soon as neither side
   * uses it. The buffer, and every view of it, must not be used afterwards.
   */
  public static void unmap(MappedByteBuffer buffer) {
    try {
      INVOKE_CLEANER.invokeExact((ByteBuffer) buffer);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("unmapping a mapped buffer failed", e);
    }
  }

  /** Bytes allocated here and not yet freed, across the whole JVM. */
  public static long outstandingBytes() {
    return OUTSTANDING.get();
  }

  /** {@code theUnsafe.invokeCleaner(ByteBuffer)}, bound to the one instance. */
  private static MethodHandle loadInvokeCleaner() {
    try {
      Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
      Field f = unsafeClass.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      Object unsafe = f.get(null);
      return MethodHandles.lookup()
          .findVirtual(
              unsafeClass, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class))
          .bindTo(unsafe);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
