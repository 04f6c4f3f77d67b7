package org.sparkccl;

/**
 * How a test's child JVM ends, so that its parent can tell: with the exit code its body returns,
 * or, if the body throws, after printing {@code FAILED: <what>} and the stack trace, with 1.
 */
final class ChildJvm {
  private ChildJvm() {}

  /** A child's work; returns the exit code. */
  interface Body {
    int run() throws Exception;
  }

  /** Runs {@code body} and exits the JVM with its outcome. */
  static void exitWith(Body body) {
    int code;
    try {
      code = body.run();
    } catch (Throwable t) {
      System.out.println("FAILED: " + t);
      t.printStackTrace(System.out);
      code = 1;
    }
    System.out.flush();
    System.exit(code);
  }
}
