package example;

import dev.idgen.hibernate.IdgenId;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** An order as the service stores it: its id is taken from idgen's sequence "orders" before the insert. */
@Entity
@Table(name = "orders")
public class Order {
  @Id
  @IdgenId("orders")
  private Long id;

  private String item;

  protected Order() {}

  public Order(String item) {
    this.item = item;
  }

  public Long getId() {
    return id;
  }

  public String getItem() {
    return item;
  }
}
