package org.sparkccl;

import java.time.Duration;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;

/**
 * A child JVM for {@code UcxUnavailableTest}, started where UCX cannot load (Jucx cannot unpack its
 * JNI library into an unusable {@code java.io.tmpdir}). Without arguments, two thread ranks ask for
 * {@code transport=ucx}, then for {@code auto}, and print what each rank got. With {@code ROOT
 * RANK}, it is one rank of two processes joined by a TCP bootstrap at {@code ROOT}, with {@code
 * auto}.
 */
public final class UcxUnavailableMain {
  private UcxUnavailableMain() {}

  public static void main(String[] args) {
    if (args.length == 2) {
      oneRankOfTwoProcesses(args[0], Integer.parseInt(args[1]));
      System.exit(0);
    }
    for (String transport : new String[] {"ucx", "auto"}) {
      CclConfig config =
          CclConfig.builder().set(Key.TRANSPORT, transport).timeout(Duration.ofSeconds(20)).build();
      Communicator[] comms = new Communicator[2];
      LocalBootstrap.Group group = LocalBootstrap.group(2);
      Throwable[] errors =
          RankHarness.createEach(
              comms, Duration.ofSeconds(60), r -> Communicator.create(group.rank(r), config));
      for (int r = 0; r < 2; r++) {
        System.out.println(
            "transport="
                + transport
                + " rank "
                + r
                + ": "
                + (errors[r] != null
                    ? "ERROR " + errors[r].getMessage()
                    : "RING " + comms[r].ringTransport()));
      }
      RankHarness.closeQuietly(comms);
    }
    System.exit(0);
  }

  private static void oneRankOfTwoProcesses(String root, int rank) {
    CclConfig config =
        CclConfig.builder().set(Key.TRANSPORT, "auto").timeout(Duration.ofSeconds(20)).build();
    String got;
    try (TcpBootstrap boot = TcpBootstrap.connect(root, rank, 2, Duration.ofSeconds(30));
        Communicator comm = Communicator.create(boot, config)) {
      got = "RING " + comm.ringTransport();
    } catch (RuntimeException e) {
      got = "ERROR " + e.getMessage();
    }
    System.out.println("transport=auto process rank " + rank + ": " + got);
  }
}
