package dev.idgen.test;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import dev.idgen.server.EmbeddedDaemon;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One daemon of {@link IdgenDaemonExtension}: the embedded daemon on a loopback port, its temporary directory,
 * its sequences and the client the tests get. It lives in a test class's {@link ExtensionContext.Store}, which
 * closes it after the class.
 *
 * <p>Threads: created on JUnit's thread; the tests of the class (in parallel, if they run so) only read it.
 * {@link #close()} runs once, whoever calls it first.
 */
@ThreadSafe
@SuppressWarnings("deprecation") // CloseableResource: JUnit before 5.13 closes only those, not AutoCloseable
final class RunningDaemon implements AutoCloseable, ExtensionContext.Store.CloseableResource {
  /** How long creating one sequence may take. */
  private static final long CREATE_DEADLINE_SECONDS = 10;

  private final Path dir;
  private final EmbeddedDaemon daemon;
  private final IdGenClient client;
  private final List<String> sequences;
  private final String target;
  private final AtomicBoolean closed = new AtomicBoolean();

  private RunningDaemon(Path dir, EmbeddedDaemon daemon, IdGenClient client, List<String> sequences,
      String target) {
    this.dir = dir;
    this.daemon = daemon;
    this.client = client;
    this.sequences = sequences;
    this.target = target;
  }

  /** Starts a daemon in a new temporary directory and creates {@code sequences}; on failure, leaves nothing. */
  static RunningDaemon start(List<String> sequences) {
    Path dir;
    try {
      dir = Files.createTempDirectory("idgen-test-");
    } catch (IOException e) {
      throw new UncheckedIOException("idgen-test: cannot create the daemon's temporary directory", e);
    }
    EmbeddedDaemon daemon = null;
    try {
      daemon = EmbeddedDaemon.onLoopback(dir, 0);
      String target = "127.0.0.1:" + daemon.port();
      create(target, sequences);
      IdGenClient client = IdGenClient.builder().target(target).usePlaintext().name("idgen-test").build();
      return new RunningDaemon(dir, daemon, client, sequences, target);
    } catch (RuntimeException | Error e) {
      if (daemon != null) {
        daemon.close();
      }
      deleteQuietly(dir, e);
      throw e;
    }
  }

  private static void create(String target, List<String> sequences) {
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    try {
      for (String name : sequences) {
        try {
          SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(CREATE_DEADLINE_SECONDS, TimeUnit.SECONDS)
              .createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
        } catch (StatusRuntimeException e) {
          throw new IllegalArgumentException("idgen-test: cannot create sequence '" + name + "': "
              + e.getStatus().getCode() + ": " + e.getStatus().getDescription(), e);
        }
      }
    } finally {
      channel.shutdownNow();
    }
  }

  /** The daemon's address, {@code 127.0.0.1:<port>}. */
  String target() {
    checkOpen();
    return target;
  }

  /** The client connected to the daemon, closed with it. */
  IdGenClient client() {
    checkOpen();
    return client;
  }

  /** The source of {@code name}, which must be one of the daemon's sequences. */
  IdSource source(String name) {
    checkOpen();
    if (!sequences.contains(name)) {
      throw new IllegalArgumentException("sequence '" + name + "' is not one of this test's sequences " + sequences
          + ": add it to @IdgenDaemonTest(sequences = ...) or IdgenDaemonExtension.withSequences(...)");
    }
    return client.sequence(name);
  }

  List<String> sequences() {
    return sequences;
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("the idgen daemon of this test class is stopped: its class has ended");
    }
  }

  /** Closes the client, stops the daemon and deletes its directory. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      client.close();
    } finally {
      try {
        daemon.close();
      } finally {
        delete(dir);
      }
    }
  }

  private static void deleteQuietly(Path dir, Throwable failure) {
    try {
      delete(dir);
    } catch (UncheckedIOException e) {
      failure.addSuppressed(e);
    }
  }

  private static void delete(Path dir) {
    try {
      Files.walkFileTree(dir, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.delete(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
          if (e != null) {
            throw e;
          }
          Files.delete(d);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException("idgen-test: cannot delete the daemon's directory " + dir, e);
    }
  }
}
