package dev.idgen.clients.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import dev.idgen.server.EmbeddedDaemon;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Node client's own tests ({@code test/*.test.mjs}, node's test runner) against real daemons over TCP:
 * four daemons on one embedded store, one of them stamping ranges with a 1 s {@code valid_for}, and a
 * loopback HTTP endpoint through which a Node test stops a daemon (failover). Runs {@code npm ci}, the
 * TypeScript build and {@code node --test} in this module's directory, and fails, printing node's output,
 * if any of them fails or node and npm are missing: never skipped.
 */
@Timeout(value = 170, unit = TimeUnit.SECONDS)
class NodeClientTest {

  @Test
  void should_pass_the_node_clients_tests_against_real_daemons(@TempDir Path dir) throws Exception {
    Path module = Path.of("").toAbsolutePath();
    assertThat(module.resolve("package-lock.json")).as("run from clients/node").exists();
    try (EmbeddedRangeStore store = EmbeddedRangeStore.open(dir.resolve("store"));
        EmbeddedDaemon a = EmbeddedDaemon.onLoopback(store, Map.of());
        EmbeddedDaemon b = EmbeddedDaemon.onLoopback(store, Map.of());
        EmbeddedDaemon expiring = EmbeddedDaemon.onLoopback(store,
            Map.of("idgen.advance.client-lease-lifetime", "1s"));
        Stoppable stopped = new Stoppable(EmbeddedDaemon.onLoopback(store, Map.of()))) {
      createSequences(a.port());
      HttpServer control = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      control.createContext("/stop", exchange -> {
        stopped.stop();
        exchange.sendResponseHeaders(204, -1);
        exchange.close();
      });
      control.start();
      try {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("IDGEN_TARGETS", target(a) + "," + target(b));
        env.put("IDGEN_EXPIRY_TARGET", target(expiring));
        env.put("IDGEN_FAILOVER_TARGETS", target(stopped.daemon) + "," + target(a));
        env.put("IDGEN_CONTROL", "http://127.0.0.1:" + control.getAddress().getPort());

        run(module, dir, env, 120, "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline");
        run(module, dir, env, 60, "npm", "run", "build");
        run(module, dir, env, 90, "node", "--test", "--test-reporter=spec", "test/");
      } finally {
        control.stop(0);
      }
    }
  }

  private static String target(EmbeddedDaemon daemon) {
    return "127.0.0.1:" + daemon.port();
  }

  /** The sequences the Node tests use: one per test, so that they share no lease. */
  private static void createSequences(int port) {
    ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", port,
        InsecureChannelCredentials.create()).build();
    try {
      SequenceAdminGrpc.SequenceAdminBlockingStub admin = SequenceAdminGrpc.newBlockingStub(channel)
          .withDeadlineAfter(10, TimeUnit.SECONDS);
      for (String name : List.of("basic", "prefetch", "expiry", "failover", "closing")) {
        admin.createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
      }
      admin.createSequence(CreateSequenceRequest.newBuilder().setName("strict")
          .setOrdering(Ordering.ORDERING_STRICT).build());
    } finally {
      channel.shutdownNow();
    }
  }

  /** Runs a command in {@code module}, printing its output; fails on a non-zero exit or after {@code seconds}. */
  private static void run(Path module, Path dir, Map<String, String> env, long seconds, String... command)
      throws InterruptedException {
    Path log = dir.resolve(command[0] + "-" + command[1].replace("-", "") + ".log");
    ProcessBuilder builder = new ProcessBuilder(command).directory(module.toFile())
        .redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(env);
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new AssertionError("could not start '" + String.join(" ", command) + "': node >= 20 and npm must be "
          + "on PATH to build and test clients/node (" + e.getMessage() + ")", e);
    }
    boolean done = process.waitFor(seconds, TimeUnit.SECONDS);
    if (!done) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
    String output = read(log);
    System.out.println("$ " + String.join(" ", command) + "\n" + output);
    assertThat(done).as("'%s' finished within %d s; its output:%n%s", String.join(" ", command), seconds, output)
        .isTrue();
    assertThat(process.exitValue()).as("exit status of '%s'; its output:%n%s", String.join(" ", command), output)
        .isZero();
  }

  private static String read(Path log) {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A daemon that the Node failover test stops, once, through the control endpoint. */
  private static final class Stoppable implements AutoCloseable {
    final EmbeddedDaemon daemon;
    private boolean closed;

    Stoppable(EmbeddedDaemon daemon) {
      this.daemon = daemon;
    }

    /** Stops the daemon, once; later calls do nothing. */
    synchronized void stop() {
      if (!closed) {
        closed = true;
        daemon.close();
      }
    }

    @Override
    public void close() {
      stop();
    }
  }
}
