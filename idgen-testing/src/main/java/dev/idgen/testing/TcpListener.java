package dev.idgen.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * {@code java dev.idgen.testing.TcpListener ADDRESS PORT}: accepts TCP connections on ADDRESS:PORT and closes
 * them, until killed (at most 10 minutes). Tests run it inside a network namespace, to be reached from the outside
 * (the launcher's namespace tests, and the chaos tests as a stand-in for a server that clients reach).
 */
public final class TcpListener {
  private TcpListener() {}

  public static void main(String[] args) throws IOException {
    long until = System.nanoTime() + 600_000_000_000L;
    try (ServerSocket server = new ServerSocket(Integer.parseInt(args[1]), 50, InetAddress.getByName(args[0]))) {
      server.setSoTimeout(1_000);
      System.out.println("listening");
      System.out.flush();
      while (System.nanoTime() < until) {
        try (Socket s = server.accept()) {
          s.getOutputStream().write('!');
        } catch (java.net.SocketTimeoutException idle) {
          // look at the clock again
        }
      }
    }
  }
}
