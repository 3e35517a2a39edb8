package example;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;

/**
 * Takes five order IDs from idgen and prints them. The target comes from {@code IDGEN_TARGET}
 * (default {@code localhost:7070}, the Quickstart server); the sequence {@code orders} must exist.
 */
public final class OrdersApp {
  private OrdersApp() {}

  public static void main(String[] args) {
    String target = System.getenv().getOrDefault("IDGEN_TARGET", "localhost:7070");
    // One client per process: it holds the channel and the leased ranges of every sequence.
    try (IdGenClient client = IdGenClient.builder().target(target).usePlaintext().build()) {
      IdSource orders = client.sequence("orders");
      for (int i = 0; i < 5; i++) {
        System.out.println("order id: " + orders.next());
      }
    }
  }
}
