import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.sparkccl.Communicator;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.bootstrap.TcpBootstrapRoot;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;

/**
 * What authentication costs (the figures in docs/reliability.md): one HMAC proof, 4 ranks meeting
 * at an authenticated bootstrap root plus one allGather, the time a rank with a wrong secret takes
 * to be refused, and Communicator.create of 4 ranks as threads over authenticated sockets. Medians
 * of ROUNDS (default 15). Run: java -cp 'perf/target/lib/*' bench/micro/AuthCost.java [ROUNDS]
 */
public final class AuthCost {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
    ChallengeResponse cr = new ChallengeResponse(ChallengeResponse.newSecret());
    byte[] opening = ChallengeResponse.newNonce();
    byte[] a = ChallengeResponse.newNonce();
    byte[] b = ChallengeResponse.newNonce();
    for (int i = 0; i < 20_000; i++) {
      cr.connectorProof(opening, a, b); // warm-up
    }
    double[] proof = new double[rounds];
    double[] meet = new double[rounds];
    double[] refused = new double[rounds];
    double[] create = new double[rounds];
    ExecutorService pool = Executors.newCachedThreadPool();
    for (int r = 0; r < rounds; r++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < 1000; i++) {
        cr.connectorProof(opening, a, b);
      }
      proof[r] = (System.nanoTime() - t0) / 1000 / 1e3;
      meet[r] = meetMs(pool, 4);
      refused[r] = refusedMs();
      create[r] = createMs(pool, 4);
    }
    pool.shutdownNow();
    System.out.printf("one HMAC-SHA256 proof: %.1f us%n", median(proof));
    System.out.printf("4 ranks: TcpBootstrap.connect + one allGather: %.1f ms%n", median(meet));
    System.out.printf("a rank with a wrong secret refused after: %.1f ms%n", median(refused));
    System.out.printf(
        "Communicator.create, 4 ranks as threads, socket transport, 2 channels: %.1f ms%n",
        median(create));
  }

  private static double meetMs(ExecutorService pool, int n) throws Exception {
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", n)) {
      long t0 = System.nanoTime();
      List<Future<?>> ranks = new ArrayList<>();
      for (int r = 0; r < n; r++) {
        int rank = r;
        ranks.add(
            pool.submit(
                () -> {
                  try (TcpBootstrap boot = TcpBootstrap.connect(root.address(), rank, n, TIMEOUT)) {
                    boot.allGather(new byte[] {(byte) rank}, TIMEOUT);
                  }
                  return null;
                }));
      }
      for (Future<?> f : ranks) {
        f.get();
      }
      return (System.nanoTime() - t0) / 1e6;
    }
  }

  private static double refusedMs() {
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 2)) {
      String address = root.address();
      char last = address.charAt(address.length() - 1);
      String wrong = address.substring(0, address.length() - 1) + (last == '0' ? '1' : '0');
      long t0 = System.nanoTime();
      try (TcpBootstrap boot = TcpBootstrap.connect(wrong, 0, 2, TIMEOUT)) {
        throw new IllegalStateException("a wrong secret was accepted");
      } catch (RuntimeException e) {
        if (e instanceof IllegalStateException && e.getMessage().contains("was accepted")) {
          throw e;
        }
      }
      return (System.nanoTime() - t0) / 1e6;
    }
  }

  private static double createMs(ExecutorService pool, int n) throws Exception {
    CclConfig config =
        CclConfig.builder().transport(Transport.SOCKET).nChannels(2).timeout(TIMEOUT).build();
    LocalBootstrap.Group group = LocalBootstrap.group(n);
    long t0 = System.nanoTime();
    List<Future<Communicator>> ranks = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int rank = r;
      ranks.add(pool.submit(() -> Communicator.create(group.rank(rank), config)));
    }
    List<Communicator> comms = new ArrayList<>();
    for (Future<Communicator> f : ranks) {
      comms.add(f.get());
    }
    double ms = (System.nanoTime() - t0) / 1e6;
    for (Communicator c : comms) {
      pool.submit(c::close);
    }
    return ms;
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
