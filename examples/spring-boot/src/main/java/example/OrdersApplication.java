package example;

import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

/**
 * Starts, saves five orders through a Spring Data JPA repository, prints the IDs idgen gave them and ends. The
 * IDs come from sequence "orders": {@code @IdgenId} takes them from the client's leases, no call per entity.
 */
@SpringBootApplication
public class OrdersApplication {

  public static void main(String[] args) {
    // Closing the context closes the IdGenClient bean.
    SpringApplication.run(OrdersApplication.class, args).close();
  }

  /** The service that stores orders. */
  @Component
  static class OrderService implements CommandLineRunner {
    private final OrderRepository orders;

    OrderService(OrderRepository orders) {
      this.orders = orders;
    }

    @Override
    public void run(String... args) {
      for (int i = 0; i < 5; i++) {
        Order saved = orders.save(new Order("book " + i));
        System.out.println("order id: " + saved.getId());
      }
      // Read back: the rows carry the IDs printed above.
      long stored = orders.count();
      if (stored != 5) {
        throw new IllegalStateException("expected 5 orders stored, found " + stored);
      }
    }
  }
}
