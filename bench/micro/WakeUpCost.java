import java.nio.channels.Selector;
import java.util.concurrent.locks.LockSupport;

/**
 * What a thread hand-off costs on this machine: a park/unpark round trip between two threads,
 * and a Selector.wakeup round trip (the proxy's way of waking). Run: java bench/micro/WakeUpCost.java
 */
public class WakeUpCost {
  static volatile long a, b;
  static volatile Thread main;

  public static void main(String[] args) throws Exception {
    int n = 20_000;
    main = Thread.currentThread();
    Thread peer = new Thread(() -> {
      for (long i = 1; i <= n; i++) {
        while (a < i) LockSupport.park();
        b = i;
        LockSupport.unpark(main);
      }
    });
    peer.start();
    long t0 = System.nanoTime();
    for (long i = 1; i <= n; i++) {
      a = i;
      LockSupport.unpark(peer);
      while (b < i) LockSupport.park();
    }
    System.out.printf("park/unpark round trip: %.1f us%n", (System.nanoTime() - t0) / 1e3 / n);
    peer.join();
    Selector s = Selector.open();
    a = 0;
    b = 0;
    Thread proxy = new Thread(() -> {
      try {
        for (long i = 1; i <= n; i++) {
          while (a < i) s.select(10);
          b = i;
          LockSupport.unpark(main);
        }
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    proxy.start();
    t0 = System.nanoTime();
    for (long i = 1; i <= n; i++) {
      a = i;
      s.wakeup();
      while (b < i) LockSupport.park();
    }
    System.out.printf("selector wakeup + unpark round trip: %.1f us%n", (System.nanoTime() - t0) / 1e3 / n);
    proxy.join();
  }
}
