package dev.idgen.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * What the extension leaves behind and how it fails: small test classes run through the engine, and this
 * class checks what they saw and what remains after them (a closed client, a stopped daemon, no directory).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdgenDaemonExtensionLifecycleTest {
  /** What the inner classes saw, for the outer test to check. */
  static volatile IdGenClient seenClient;
  static volatile String seenTarget;
  static volatile Set<Path> seenDirs;

  @BeforeEach
  void clear() {
    seenClient = null;
    seenTarget = null;
    seenDirs = null;
  }

  /** The daemons' temporary directories that exist now. */
  static Set<Path> daemonDirs() {
    try (Stream<Path> dirs = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return dirs.filter(p -> p.getFileName().toString().startsWith("idgen-test-")).collect(Collectors.toSet());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void should_close_the_client_stop_the_daemon_and_delete_its_directory_after_the_class() throws Exception {
    Set<Path> before = daemonDirs();

    Events tests = EngineTestKit.engine("junit-jupiter").selectors(selectClass(Registered.class))
        .execute().testEvents();

    tests.assertStatistics(s -> s.started(2).succeeded(1).failed(1));
    tests.assertThatEvents().haveExactly(1, event(test("asks_for_a_sequence_it_did_not_name"),
        finishedWithFailure(instanceOf(ParameterResolutionException.class),
            message("@Sequence(\"refunds\") on a parameter of asks_for_a_sequence_it_did_not_name: sequence 'refunds' is not one of this test's sequences "
                + "[orders]: add it to @IdgenDaemonTest(sequences = ...) or IdgenDaemonExtension.withSequences(...)"))));

    assertThat(seenDirs).as("the daemon's directory, during the class").hasSize(1);
    Path dir = seenDirs.iterator().next();
    assertThat(before).doesNotContain(dir);
    assertThat(dir).as("deleted after the class").doesNotExist();
    assertThatThrownBy(() -> seenClient.sequence("orders")).as("the client is closed")
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    int port = Integer.parseInt(seenTarget.substring(seenTarget.lastIndexOf(':') + 1));
    try (Socket s = new Socket()) {
      assertThatThrownBy(() -> s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000))
          .as("the daemon no longer listens").isInstanceOf(ConnectException.class);
    }
    assertThatThrownBy(Registered.idgen::target).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("stopped");
  }

  @Test
  void should_fail_the_class_saying_how_to_name_sequences_when_none_are_named() {
    EngineExecutionResults results = EngineTestKit.engine("junit-jupiter").selectors(selectClass(Unnamed.class))
        .execute();

    results.allEvents().assertThatEvents().haveAtLeastOne(event(finishedWithFailure(
        instanceOf(ExtensionConfigurationException.class),
        message(m -> m.contains(Unnamed.class.getName()) && m.contains("@IdgenDaemonTest(sequences = ...)")
            && m.contains("IdgenDaemonExtension.withSequences(...)")))));
    assertThat(results.testEvents().succeeded().count()).isZero();
  }

  @Test
  void should_fail_the_class_with_the_servers_answer_when_a_sequence_cannot_be_created_and_leave_no_directory() {
    Set<Path> before = daemonDirs();

    EngineExecutionResults results = EngineTestKit.engine("junit-jupiter").selectors(selectClass(BadName.class))
        .execute();

    results.allEvents().assertThatEvents().haveAtLeastOne(event(finishedWithFailure(
        instanceOf(IllegalArgumentException.class),
        message(m -> m.startsWith("idgen-test: cannot create sequence 'bad name': INVALID_ARGUMENT")))));
    assertThat(results.testEvents().succeeded().count()).isZero();
    assertThat(daemonDirs()).as("the daemon stopped and its directory deleted").isEqualTo(before);
  }

  @Test
  void should_refuse_an_extension_without_sequences() {
    assertThatThrownBy(IdgenDaemonExtension::withSequences).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sequences: none (expected: at least one name)");
  }

  /** Registered on a static field; one test gets IDs, one asks for a sequence it did not name. */
  static class Registered {
    @RegisterExtension
    static IdgenDaemonExtension idgen = IdgenDaemonExtension.withSequences("orders", "orders");

    @Test
    void takes_ids(IdGenClient client, @IdgenTarget String target) throws IOException {
      assertThat(idgen.target()).isEqualTo(target);
      assertThat(idgen.client()).isSameAs(client);
      assertThat(idgen.sequence("orders").next()).isPositive();
      seenClient = client;
      seenTarget = target;
      seenDirs = daemonDirs().stream().filter(IdgenDaemonExtensionLifecycleTest::hasFiles)
          .collect(Collectors.toSet());
    }

    @Test
    void asks_for_a_sequence_it_did_not_name(@Sequence("refunds") IdSource refunds) {
      refunds.next();
    }
  }

  /** A name the server refuses. */
  @IdgenDaemonTest(sequences = "bad name")
  static class BadName {
    @Test
    void takes_ids(IdGenClient client) {
      client.sequence("orders").next();
    }
  }

  /** The extension without {@link IdgenDaemonTest}: no sequences. */
  @ExtendWith(IdgenDaemonExtension.class)
  static class Unnamed {
    @Test
    void takes_ids(IdGenClient client) {
      client.sequence("orders").next();
    }
  }

  private static boolean hasFiles(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> all = files.toList();
      return !all.isEmpty();
    } catch (IOException e) {
      return false;
    }
  }
}
