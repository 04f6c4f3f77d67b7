package org.sparkccl;

/**
 * Ranks called different collectives, or the same one with different arguments, at the same
 * position in their call sequences. The message names both sides.
 */
public class CclMismatchException extends CclException {
  public CclMismatchException(String message) {
    super(message);
  }
}
