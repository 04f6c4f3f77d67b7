import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;

/**
 * Small allReduce latency with the ranks as threads of one JVM (no process boundary), with
 * percentiles: args RANKS COUNT. Run: bench/micro/run.sh
 */
public class ThreadRanksLatency {
  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    int count = Integer.parseInt(args[1]);
    int iters = 2000;
    LocalBootstrap.Group group = LocalBootstrap.group(n);
    CclConfig config = CclConfig.fromEnvironment();
    ExecutorService pool = Executors.newFixedThreadPool(n);
    List<Future<long[]>> ranks = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int rank = r;
      ranks.add(pool.submit(() -> {
        try (Communicator c = Communicator.create(group.rank(rank), config);
            HostBuffer b = HostDevice.INSTANCE.allocate(4L * count)) {
          for (int i = 0; i < 500; i++) c.allReduce(b, b, count, DataType.FLOAT32, ReduceOp.SUM);
          long[] us = new long[iters];
          for (int i = 0; i < iters; i++) {
            long t0 = System.nanoTime();
            c.allReduce(b, b, count, DataType.FLOAT32, ReduceOp.SUM);
            us[i] = (System.nanoTime() - t0) / 1000;
          }
          return us;
        }
      }));
    }
    long[] us = ranks.get(0).get();
    for (Future<long[]> f : ranks) f.get();
    pool.shutdown();
    Arrays.sort(us);
    System.out.printf("%d ranks as threads, %d floats: p10 %d us, median %d us, p90 %d us%n",
        n, count, us[iters / 10], us[iters / 2], us[iters * 9 / 10]);
  }
}
