package dev.idgen.chaos;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * {@code java dev.idgen.chaos.Listener ADDRESS PORT}: accepts TCP connections on ADDRESS:PORT and closes them,
 * until killed (at most 10 minutes). {@link NetworkFaultsIT} runs it in a server's namespace, as a stand-in
 * for a server that clients reach.
 */
public final class Listener {
  private Listener() {}

  public static void main(String[] args) throws IOException {
    long until = System.nanoTime() + 600_000_000_000L;
    try (ServerSocket server = new ServerSocket(Integer.parseInt(args[1]), 50, InetAddress.getByName(args[0]))) {
      server.setSoTimeout(1_000);
      System.out.println("listening");
      System.out.flush();
      while (System.nanoTime() < until) {
        try (Socket s = server.accept()) {
          s.getOutputStream().write('!');
        } catch (SocketTimeoutException idle) {
          // look at the clock again
        }
      }
    }
  }
}
