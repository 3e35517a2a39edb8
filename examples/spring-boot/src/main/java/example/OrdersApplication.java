package example;

import dev.idgen.client.IdSource;
import dev.idgen.spring.IdSequence;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

/** Starts, takes five order IDs from the {@code orders} source the starter made, prints them and ends. */
@SpringBootApplication
public class OrdersApplication {

  public static void main(String[] args) {
    // Closing the context closes the IdGenClient bean.
    SpringApplication.run(OrdersApplication.class, args).close();
  }

  /** The service that needs IDs: the starter injects the source of sequence "orders" (application.yaml). */
  @Component
  static class OrderService implements CommandLineRunner {
    private final IdSource orders;

    OrderService(@IdSequence("orders") IdSource orders) {
      this.orders = orders;
    }

    @Override
    public void run(String... args) {
      for (int i = 0; i < 5; i++) {
        System.out.println("order id: " + orders.next());
      }
    }
  }
}
