import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * What sealing costs on one core, as the socket transport's SealedWire does it with encrypt=true:
 * 64 KiB records sealed from a direct buffer (a FIFO slot) into a heap buffer with AES-256-GCM,
 * then opened from the heap buffer into another direct buffer, with a fresh nonce per record.
 * Prints the medians over ROUNDS (default 9) of GB/s each way and the bytes the JDK's cipher
 * allocates per record (seal and open together). Run: java bench/micro/SealCost.java [ROUNDS]
 */
public final class SealCost {
  private static final int RECORD = 64 << 10;
  private static final long BYTES_PER_ROUND = 256L << 20;

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
    SecretKeySpec key = new SecretKeySpec(new byte[32], "AES");
    Cipher seal = Cipher.getInstance("AES/GCM/NoPadding");
    Cipher open = Cipher.getInstance("AES/GCM/NoPadding");
    ByteBuffer slot = ByteBuffer.allocateDirect(RECORD);
    ByteBuffer sealed = ByteBuffer.allocate(RECORD + 16);
    ByteBuffer into = ByteBuffer.allocateDirect(RECORD);
    for (int i = 0; i < RECORD; i++) {
      slot.put(i, (byte) (i * 31 + 7));
    }
    byte[] nonce = new byte[12];
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long self = Thread.currentThread().getId();
    double[] sealGbps = new double[rounds];
    double[] openGbps = new double[rounds];
    double[] alloc = new double[rounds];
    long counter = 0;
    long records = BYTES_PER_ROUND / RECORD;
    for (int r = -2; r < rounds; r++) { // two rounds of warm-up for the JIT
      long sealNs = 0;
      long openNs = 0;
      long a0 = mx.getThreadAllocatedBytes(self);
      for (long i = 0; i < records; i++) {
        counter++;
        for (int b = 0; b < 8; b++) {
          nonce[4 + b] = (byte) (counter >>> (56 - 8 * b));
        }
        long t0 = System.nanoTime();
        seal.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, nonce));
        slot.clear();
        sealed.clear();
        seal.doFinal(slot, sealed);
        sealed.flip();
        long t1 = System.nanoTime();
        open.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, nonce));
        into.clear();
        open.doFinal(sealed, into);
        long t2 = System.nanoTime();
        sealNs += t1 - t0;
        openNs += t2 - t1;
      }
      if (r >= 0) {
        alloc[r] = (mx.getThreadAllocatedBytes(self) - a0) / (double) records;
        sealGbps[r] = BYTES_PER_ROUND / (double) sealNs;
        openGbps[r] = BYTES_PER_ROUND / (double) openNs;
      }
    }
    System.out.printf(
        "64 KiB records, %d rounds of %d MiB: seal %.2f GB/s, open %.2f GB/s,"
            + " %.0f bytes allocated per record (medians)%n",
        rounds, BYTES_PER_ROUND >> 20, median(sealGbps), median(openGbps), median(alloc));
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
