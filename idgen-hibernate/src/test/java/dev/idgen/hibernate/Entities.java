package dev.idgen.hibernate;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** The tests' entities, one per case. */
final class Entities {
  private Entities() {}

  /** An entity as an application writes it: a {@code Long} id. */
  @Entity
  @Table(name = "orders")
  static class Order {
    @Id
    @IdgenId("orders")
    Long id;

    String item;

    Order() {}

    Order(String item) {
      this.item = item;
    }
  }

  /** A primitive id, and the sequence of the batch test. */
  @Entity
  @Table(name = "lines")
  static class Line {
    @Id
    @IdgenId("lines")
    long id;

    int quantity;

    Line() {}

    Line(int quantity) {
      this.quantity = quantity;
    }
  }

  /** A sequence the daemon does not have. */
  @Entity
  @Table(name = "ghosts")
  static class Ghost {
    @Id
    @IdgenId("ghosts")
    Long id;
  }

  /** An id that cannot hold an idgen ID. */
  @Entity
  @Table(name = "tags")
  static class Tag {
    @Id
    @IdgenId("orders")
    String id;
  }
}
