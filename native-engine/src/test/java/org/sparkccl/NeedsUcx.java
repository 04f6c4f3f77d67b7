package org.sparkccl;

import org.junit.jupiter.api.Assumptions;
import org.sparkccl.transport.ucx.UcxTransport;

/** Skips a test where UCX does not load, saying why on the console and in the test report. */
public final class NeedsUcx {
  private NeedsUcx() {}

  /** Loads UCX once (a context opened and closed); skips {@code test} when that fails. */
  public static void assume(String test) {
    String why = UcxTransport.warmUp();
    if (why != null) {
      System.out.println("SKIPPED " + test + ": UCX does not load here: " + why);
    }
    Assumptions.assumeTrue(why == null, "UCX does not load here: " + why);
  }
}
