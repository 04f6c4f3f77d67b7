import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The floor of one hop: a 16-byte busy-polled NIO round trip over loopback TCP between two
 * threads. Run: java bench/micro/TcpRoundTrip.java
 */
public class TcpRoundTrip {
  public static void main(String[] args) throws Exception {
    ServerSocketChannel ss = ServerSocketChannel.open();
    ss.bind(new InetSocketAddress("127.0.0.1", 0));
    SocketChannel c = SocketChannel.open(ss.getLocalAddress());
    SocketChannel s = ss.accept();
    for (SocketChannel ch : new SocketChannel[] {c, s}) {
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.configureBlocking(false);
    }
    int n = 20_000;
    Thread echo = new Thread(() -> {
      try {
        ByteBuffer b = ByteBuffer.allocateDirect(16);
        for (int i = 0; i < n; i++) {
          b.clear();
          while (b.hasRemaining()) s.read(b);
          b.flip();
          while (b.hasRemaining()) s.write(b);
        }
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    echo.start();
    ByteBuffer b = ByteBuffer.allocateDirect(16);
    long t0 = 0;
    for (int i = 0; i < n; i++) {
      if (i == 2000) t0 = System.nanoTime();
      b.clear();
      while (b.hasRemaining()) c.write(b);
      b.clear();
      while (b.hasRemaining()) c.read(b);
    }
    System.out.printf("loopback TCP round trip, busy-polled: %.1f us%n", (System.nanoTime() - t0) / 1e3 / (n - 2000));
    echo.join();
  }
}
