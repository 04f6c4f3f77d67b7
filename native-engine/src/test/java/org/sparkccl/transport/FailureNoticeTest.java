package org.sparkccl.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CclAbortedException;
import org.sparkccl.CclException;
import org.sparkccl.CclMismatchException;
import org.sparkccl.CclRemoteException;
import org.sparkccl.CclTimeoutException;

class FailureNoticeTest {
  private static String randomText(SplittableRandom rnd) {
    StringBuilder b = new StringBuilder("rank " + rnd.nextInt(64) + ": ");
    int n = rnd.nextInt(1, 200);
    for (int i = 0; i < n; i++) {
      b.append((char) rnd.nextInt(0x20, 0x3000));
    }
    return b.toString();
  }

  @Test
  @DisplayName("a mismatch told to a peer, bare or wrapped, is raised there as a mismatch")
  void mismatchKeepsItsKind() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int i = 0; i < 100; i++) {
      String text = randomText(rnd);
      CclException[] mismatches = {
        new CclMismatchException(text),
        new CclAbortedException(text, new CclMismatchException("beneath")),
        new CclException(text, new CclAbortedException("between", new CclMismatchException("m")))
      };
      for (CclException m : mismatches) {
        CclException told = FailureNotice.raise(FailureNotice.of(m));
        assertInstanceOf(CclMismatchException.class, told);
        assertEquals(text, told.getMessage());
      }
    }
  }

  @Test
  @DisplayName("any other failure is raised at the peer as a remote failure with the same message")
  void otherFailuresArriveAsRemote() {
    SplittableRandom rnd = new SplittableRandom(11);
    for (int i = 0; i < 100; i++) {
      String text = randomText(rnd);
      CclException[] failures = {
        new CclException(text),
        new CclTimeoutException(text),
        new CclAbortedException(text, new CclTimeoutException("beneath")),
        new CclRemoteException(text),
        new CclException("mismatch " + text)
      };
      for (CclException f : failures) {
        CclException told = FailureNotice.raise(FailureNotice.of(f));
        assertInstanceOf(CclRemoteException.class, told, f.getClass().getSimpleName());
        assertEquals(f.getMessage(), told.getMessage());
      }
    }
  }
}
