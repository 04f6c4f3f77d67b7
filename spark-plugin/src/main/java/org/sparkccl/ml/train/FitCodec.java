package org.sparkccl.ml.train;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A {@link Fit} as plain bytes for its way from rank 0 through the shuffle that ends the barrier
 * stage: bytes pass any serializer Spark is configured with, Kryo included.
 */
final class FitCodec {
  private static final int VERSION = 1;
  private static final int REJECTED = -1;

  private FitCodec() {}

  /** Rank 0's fit, with when its task ended (to time the way back to the driver). */
  record Message(Fit fit, long taskEndMillis) {}

  static byte[] encode(Fit fit, long taskEndMillis) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(VERSION);
      out.writeLong(taskEndMillis);
      out.writeInt(fit.numSets());
      out.writeInt(fit.numFeatures());
      writeDoubles(out, fit.coefficients());
      writeDoubles(out, fit.intercepts());
      writeDoubles(out, fit.objectiveHistory());
      Timings t = fit.timings();
      writeDoubles(
          out,
          new double[] {
            t.launchMs(),
            t.packMs(),
            t.communicatorMs(),
            t.summaryMs(),
            t.optimizeMs(),
            t.computeMs(),
            t.reduceMs(),
            t.evaluations(),
            t.resultMs()
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /** The message of a fit the data ruled out ({@link InputRejected}). */
  static byte[] encodeRejection(String message) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(REJECTED);
      out.writeUTF(message);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /**
   * @throws InputRejected for a rejection's bytes
   */
  static Message decode(byte[] message) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(message))) {
      int version = in.readInt();
      if (version == REJECTED) {
        throw new InputRejected(in.readUTF());
      }
      if (version != VERSION) {
        throw new IllegalArgumentException("a trained model of format " + version);
      }
      long taskEnd = in.readLong();
      int sets = in.readInt();
      int d = in.readInt();
      double[] coefficients = readDoubles(in);
      double[] intercepts = readDoubles(in);
      double[] history = readDoubles(in);
      double[] t = readDoubles(in);
      Timings timings = new Timings(t[0], t[1], t[2], t[3], t[4], t[5], t[6], (int) t[7], t[8]);
      return new Message(new Fit(sets, d, coefficients, intercepts, history, timings), taskEnd);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void writeDoubles(DataOutputStream out, double[] values) throws IOException {
    out.writeInt(values.length);
    for (double v : values) {
      out.writeDouble(v);
    }
  }

  private static double[] readDoubles(DataInputStream in) throws IOException {
    double[] values = new double[in.readInt()];
    for (int i = 0; i < values.length; i++) {
      values[i] = in.readDouble();
    }
    return values;
  }
}
