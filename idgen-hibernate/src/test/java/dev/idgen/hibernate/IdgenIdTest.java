package dev.idgen.hibernate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import dev.idgen.hibernate.Entities.Ghost;
import dev.idgen.hibernate.Entities.Line;
import dev.idgen.hibernate.Entities.Order;
import dev.idgen.hibernate.Entities.Tag;
import dev.idgen.server.EmbeddedDaemon;
import dev.idgen.test.InMemoryIdSource;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.hibernate.SessionFactory;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.cfg.AvailableSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link IdgenId} in plain Hibernate, on H2, against an in-process idgen daemon. */
class IdgenIdTest {
  private static final long START = 1_000;
  private static final long MAX = 1_000_000;
  private static final Map<String, AtomicInteger> allocateCalls = new ConcurrentHashMap<>();

  private static EmbeddedDaemon daemon;
  private static ManagedChannel channel;
  private static IdGenClient client;

  @BeforeAll
  static void start(@TempDir Path dir) {
    daemon = EmbeddedDaemon.inProcess(dir, List.of(new AllocateCounter()));
    channel = InProcessChannelBuilder.forName(daemon.inProcessName()).directExecutor().build();
    for (String name : List.of("orders", "lines")) {
      SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).createSequence(
          CreateSequenceRequest.newBuilder().setName(name).setStart(START).setMax(MAX).build());
    }
    client = IdGenClient.builder().channel(channel).waitDeadline(Duration.ofSeconds(2)).build();
  }

  @AfterAll
  static void stop() {
    client.close();
    channel.shutdownNow();
    daemon.close();
  }

  @Test
  void should_give_entities_distinct_ids_from_the_sequence_range() {
    try (SessionFactory factory = factory(Map.of(IdgenHibernate.CLIENT, client), Order.class)) {
      List<Order> orders = new ArrayList<>();
      factory.inTransaction(session -> {
        for (int i = 0; i < 20; i++) {
          Order order = new Order("item-" + i);
          session.persist(order);
          orders.add(order);
        }
      });

      Set<Long> ids = new HashSet<>();
      orders.forEach(o -> ids.add(o.id));
      assertThat(ids).hasSize(20).allSatisfy(id -> assertThat(id).isBetween(START, MAX));
      Order first = orders.get(0);
      assertThat(factory.fromTransaction(s -> s.find(Order.class, first.id)).item).isEqualTo(first.item);
    }
  }

  @Test
  void should_batch_500_inserts_with_a_handful_of_allocate_calls() {
    CountingDataSource db = new CountingDataSource("batch");
    try (SessionFactory factory = factory(
        Map.of(IdgenHibernate.CLIENT, client, AvailableSettings.JAKARTA_NON_JTA_DATASOURCE, db,
            AvailableSettings.STATEMENT_BATCH_SIZE, "50"), Line.class)) {
      db.reset();
      factory.inTransaction(session -> {
        for (int i = 0; i < 500; i++) {
          session.persist(new Line(i));
        }
      });

      assertThat(db.insertsBatched).hasValue(500);
      assertThat(db.insertsRunAlone).hasValue(0);
      assertThat(db.batchesRun.get()).isBetween(10, 11);
      long rows = factory.fromTransaction(s -> s.createNativeQuery("select count(*) from lines", Long.class)
          .getSingleResult());
      assertThat(rows).isEqualTo(500L);
      // Counted from the start: the source's first lease is requested when the factory starts.
      assertThat(allocateCalls.get("lines").get()).isBetween(1, 6);
    }
  }

  @Test
  void should_take_ids_from_a_function_of_sources_when_the_setting_holds_one() {
    InMemoryIdSource orders = InMemoryIdSource.startingAt("orders", 7);
    Function<String, IdSource> sources = name -> orders;
    try (SessionFactory factory = factory(Map.of(IdgenHibernate.CLIENT, sources), Order.class)) {
      Order a = new Order("a");
      Order b = new Order("b");
      factory.inTransaction(session -> {
        session.persist(a);
        session.persist(b);
      });

      assertThat(List.of(a.id, b.id)).containsExactly(7L, 8L);
    }
  }

  @Test
  void should_fail_at_start_naming_the_setting_when_no_client_is_set() {
    assertThatThrownBy(() -> factory(Map.of(), Order.class).close())
        .satisfies(e -> assertThat(messages(e)).contains("@IdgenId(\"orders\") on " + Order.class.getName() + ".id")
            .contains("Hibernate setting idgen.hibernate.client is missing"));
  }

  @Test
  void should_fail_at_start_when_the_setting_holds_a_string() {
    assertThatThrownBy(() -> factory(Map.of(IdgenHibernate.CLIENT, "localhost:7070"), Order.class).close())
        .satisfies(e -> assertThat(messages(e))
            .contains("idgen.hibernate.client holds a java.lang.String; expected the IdGenClient object"));
  }

  @Test
  void should_fail_at_start_on_an_id_that_is_not_a_long() {
    assertThatThrownBy(() -> factory(Map.of(IdgenHibernate.CLIENT, client), Tag.class).close())
        .satisfies(e -> assertThat(messages(e))
            .contains(Tag.class.getName() + ".id: the id must be a long or Long (idgen IDs are 64-bit), not "
                + "java.lang.String"));
  }

  @Test
  void should_fail_the_first_insert_naming_a_sequence_the_servers_do_not_have() {
    try (SessionFactory factory = factory(Map.of(IdgenHibernate.CLIENT, client), Ghost.class)) {
      assertThatThrownBy(() -> factory.inTransaction(session -> session.persist(new Ghost())))
          .satisfies(e -> assertThat(messages(e))
              .contains("@IdgenId(\"ghosts\") on " + Ghost.class.getName() + ".id: no ID from sequence 'ghosts'")
              .contains("NOT_FOUND"));
    }
  }

  private static SessionFactory factory(Map<String, Object> settings, Class<?>... entities) {
    Map<String, Object> all = new HashMap<>();
    all.put(AvailableSettings.JAKARTA_JDBC_URL, "jdbc:h2:mem:idgen-hibernate;DB_CLOSE_DELAY=-1");
    all.put(AvailableSettings.HBM2DDL_AUTO, "create-drop");
    all.putAll(settings);
    StandardServiceRegistry registry = new StandardServiceRegistryBuilder().applySettings(all).build();
    try {
      MetadataSources sources = new MetadataSources(registry);
      for (Class<?> entity : entities) {
        sources.addAnnotatedClass(entity);
      }
      return sources.buildMetadata().buildSessionFactory();
    } catch (RuntimeException e) {
      StandardServiceRegistryBuilder.destroy(registry);
      throw e;
    }
  }

  /** The messages of an exception and its causes, one a line: Hibernate wraps what the generator throws. */
  private static String messages(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      b.append(t.getMessage()).append('\n');
    }
    return b.toString();
  }

  /** Counts the Allocate calls the daemon receives, by sequence. */
  private static final class AllocateCounter implements ServerInterceptor {
    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
        ServerCallHandler<Q, R> next) {
      return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
        @Override
        public void onMessage(Q message) {
          if (message instanceof AllocateRequest request) {
            allocateCalls.computeIfAbsent(request.getSequence(), n -> new AtomicInteger()).incrementAndGet();
          }
          super.onMessage(message);
        }
      };
    }
  }
}
