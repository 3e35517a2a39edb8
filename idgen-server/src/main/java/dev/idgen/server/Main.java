package dev.idgen.server;

import com.google.inject.CreationException;
import com.google.inject.Module;
import com.google.inject.ProvisionException;
import com.google.inject.spi.Message;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import dev.idgen.server.config.ConfigLoader;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.http.HttpSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * The {@code idgen-server} command: reads the configuration, wires the daemon with Guice, serves until
 * SIGTERM, then shuts down gracefully.
 *
 * <p>Exit codes: 0 after a shutdown, 1 if the server could not start (a port taken; a store that gave up
 * connecting, which the Cassandra store does only with the driver's {@code advanced.reconnect-on-init = false}:
 * by default it waits for Cassandra), 2 for a usage or configuration error.
 */
@Command(
    name = "idgen-server",
    mixinStandardHelpOptions = true,
    versionProvider = Main.VersionProvider.class,
    sortOptions = false,
    subcommands = {StoreCommands.Backup.class, StoreCommands.Export.class, StoreCommands.RestoreGuard.class, StoreCommands.MoveStore.class},
    description = {
        "Serves short, never-duplicated numeric IDs over gRPC (idgen.v1.IdGen, idgen.v1.SequenceAdmin),",
        "with gRPC health and server reflection.",
        "",
        "Settings come from reference.conf (every key documented there), a --config file, IDGEN_* "
            + "environment variables and -D system properties, in increasing precedence.",
        "",
        "The store commands (backup, restore-guard, move-store) run with the server stopped."
    })
public final class Main implements Callable<Integer> {

  private static final Logger log = LoggerFactory.getLogger(Main.class);

  static final int EXIT_OK = 0;
  static final int EXIT_START_FAILED = 1;
  static final int EXIT_USAGE = 2;

  @Option(names = "--config", paramLabel = "FILE",
      description = "A HOCON file whose settings override the defaults, e.g. idgen.grpc.port = 7171")
  private Path configFile;

  @Spec
  private CommandSpec spec;

  public static void main(String[] args) {
    // grpc-java logs through java.util.logging: send it to SLF4J, like everything else.
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    CommandLine commandLine = new CommandLine(new Main());
    int code = commandLine.execute(args);
    // After a clean shutdown the JVM is already exiting (SIGTERM): System.exit would wait for the very
    // shutdown hook that got us here. A store command (backup, move-store...) is done when it returns.
    boolean storeCommand = commandLine.getParseResult() != null && commandLine.getParseResult().hasSubcommand();
    if (code != EXIT_OK || storeCommand) {
      System.exit(code);
    }
  }

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter err = spec.commandLine().getErr();
    Config config;
    ServerSettings settings;
    OperationsSettings operations;
    Module storeModule;
    try {
      config = loadConfig();
      settings = ServerSettings.from(config);
      operations = OperationsSettings.from(config);
      // The store module is chosen here, not by an `if` inside a module.
      storeModule = switch (settings.store()) {
        case EMBEDDED -> new EmbeddedStoreModule();
        case CASSANDRA -> new CassandraStoreModule(CassandraStoreModule.settings(config));
      };
    } catch (ConfigException e) {
      err.println("idgen-server: invalid configuration: " + e.getMessage());
      err.flush();
      return EXIT_USAGE;
    }

    IdGenServer server;
    try {
      server = Wiring.injector(config, operations, storeModule, GrpcModule.netty(), null)
          .getInstance(IdGenServer.class);
    } catch (CreationException e) {
      Throwable cause = rootCause(firstCause(e.getErrorMessages(), e));
      log.error("idgen-server could not start: {}", cause.getMessage(), cause);
      return EXIT_START_FAILED;
    } catch (ProvisionException e) {
      Throwable cause = rootCause(firstCause(e.getErrorMessages(), e));
      log.error("idgen-server could not start: {}", cause.getMessage(), cause);
      return EXIT_START_FAILED;
    }
    try {
      server.start();
    } catch (IOException e) {
      log.error("idgen-server could not listen (gRPC on {}:{}, HTTP/JSON on {}:{}, metrics on {}:{}): {}",
          settings.grpcHost(), settings.grpcPort(), config.getString(HttpSettings.HOST), config.getInt(HttpSettings.PORT),
          operations.metrics().host(), operations.metrics().port(),
          rootCause(e).getMessage(), e);
      server.finishShutdown();
      return EXIT_START_FAILED;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown, "idgen-shutdown"));
    server.awaitTermination();
    // A store that gave up connecting (Cassandra with advanced.reconnect-on-init = false) stopped the server.
    return server.startFailure().isPresent() ? EXIT_START_FAILED : EXIT_OK;
  }

  /** The layered configuration for this command line (see {@link ConfigLoader}). */
  Config loadConfig() {
    return ConfigLoader.load(Optional.ofNullable(configFile));
  }

  /**
   * The first underlying exception of a Guice failure: Guice reports one failing provider once per
   * dependent binding, wrapped in a page of context that says nothing to an operator.
   */
  private static Throwable firstCause(Collection<Message> messages, Throwable fallback) {
    for (Message message : messages) {
      if (message.getCause() != null) {
        return message.getCause();
      }
    }
    return fallback;
  }

  private static Throwable rootCause(Throwable t) {
    Throwable cause = t;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return cause;
  }

  /** {@code --version}: the build's version. */
  static final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"idgen-server " + Versions.server()};
    }
  }
}
