package org.sparkccl;

/** A wait went past the configured {@code timeout} without progress. */
public class CclTimeoutException extends CclException {
  public CclTimeoutException(String message) {
    super(message);
  }
}
