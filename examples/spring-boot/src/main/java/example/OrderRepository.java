package example;

import org.springframework.data.jpa.repository.JpaRepository;

/** Orders in the database; Spring Data implements it. */
public interface OrderRepository extends JpaRepository<Order, Long> {}
