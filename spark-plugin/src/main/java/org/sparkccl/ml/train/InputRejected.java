package org.sparkccl.ml.train;

/**
 * A fit the data rules out, found after the summary all-reduce. Every rank sees the same summary
 * and so rejects alike: rank 0 sends the message to the driver as the stage's result, since a
 * failed stage would only be retried to fail the same way.
 *
 * <pre>{@code
 * throw new InputRejected("the instances' weights sum to 0.0; nothing to train on");
 * }</pre>
 */
public final class InputRejected extends IllegalArgumentException {
  public InputRejected(String message) {
    super(message);
  }
}
