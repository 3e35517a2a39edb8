package dev.idgen.cli;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;

/**
 * {@code idgen}: the operators' command line over the {@code idgen.v1} gRPC API — create, get, list and
 * advance sequences, reserve ranges and list them, and allocate IDs — so that neither proto files nor grpcurl are needed.
 *
 * <p>The connection options are global: they may be given before or after the subcommand. Each run opens
 * one channel, makes its calls, and closes it. Every gRPC failure is reported once, here: the status and
 * the server's message on stderr, and an exit code per status (see {@link ExitCodes}).
 */
@Command(
    name = "idgen",
    mixinStandardHelpOptions = true,
    versionProvider = IdgenCli.VersionProvider.class,
    sortOptions = false,
    subcommands = {
        CreateCommand.class,
        GetCommand.class,
        ListCommand.class,
        UpdateCommand.class,
        DeleteCommand.class,
        UndeleteCommand.class,
        AdvanceCommand.class,
        ImportCommand.class,
        AllocateCommand.class,
        ReserveCommand.class,
        ReservationsCommand.class,
        HelpCommand.class,
    },
    description = {
        "Administers idgen sequences and allocates IDs over gRPC (idgen.v1).",
    },
    footer = {
        "",
        "Examples:",
        "  idgen --plaintext create orders --start 42000 --max 2147483647",
        "  idgen --plaintext allocate orders --count 10",
        "  idgen --plaintext reserve orders 10000000 --request-id import-2026-11",
        "  IDGEN_TARGET=idgen.example.com:443 idgen --ca-cert ca.pem get orders -o json",
    })
public final class IdgenCli {

  /** The target when neither {@code --target} nor {@code IDGEN_TARGET} is given. */
  public static final String DEFAULT_TARGET = "localhost:7070";

  /** The deadline of each call when {@code --deadline} is not given. */
  public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(10);

  static final String TARGET_VARIABLE = "IDGEN_TARGET";
  static final String TOKEN_VARIABLE = "IDGEN_TOKEN";

  /** How output is written ({@code --output}). */
  enum OutputFormat { text, json }

  /** Opens the channel to a target; tests replace it with an in-process channel. */
  @FunctionalInterface
  interface ChannelFactory {
    ManagedChannel open(String target, ChannelCredentials credentials);
  }

  // Global options. They have no picocli default value on purpose: an inherited option's default would
  // be applied again when the subcommand is parsed, over a value given before the subcommand. The
  // defaults are resolved in connection() instead (and documented in the descriptions).

  @Option(names = "--target", scope = ScopeType.INHERIT, paramLabel = "HOST:PORT",
      description = "The server: host:port, or a gRPC target such as dns:///idgen-headless.ns.svc"
          + ".cluster.local:7070. Default: $" + TARGET_VARIABLE + ", else " + DEFAULT_TARGET + ".")
  private String target;

  @Option(names = "--plaintext", scope = ScopeType.INHERIT,
      description = "Connect without TLS. The default is TLS, trusting the JVM's CAs (or --ca-cert).")
  private boolean plaintext;

  @Option(names = "--ca-cert", scope = ScopeType.INHERIT, paramLabel = "FILE",
      description = "PEM file of the CA(s) that signed the server's certificate (TLS).")
  private Path caCert;

  @Option(names = "--client-cert", scope = ScopeType.INHERIT, paramLabel = "FILE",
      description = "PEM certificate chain of this client, for mutual TLS (with --client-key).")
  private Path clientCert;

  @Option(names = "--client-key", scope = ScopeType.INHERIT, paramLabel = "FILE",
      description = "PEM (PKCS#8) private key of --client-cert.")
  private Path clientKey;

  @Option(names = "--token", scope = ScopeType.INHERIT, paramLabel = "TOKEN",
      description = "A bearer token, sent as 'authorization: Bearer TOKEN'. Default: $"
          + TOKEN_VARIABLE + ", if set.")
  private String token;

  @Option(names = "--deadline", scope = ScopeType.INHERIT, paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "The deadline of each call: 500ms, 10s, 2m, or ISO-8601 (PT10S). Default: 10s"
          + " (advance: 60s, since it waits for every server and for client leases to expire).")
  private Duration deadline;

  @Option(names = {"-o", "--output"}, scope = ScopeType.INHERIT, paramLabel = "FORMAT",
      description = "text (the default) or json (protobuf's JSON mapping).")
  private OutputFormat output;

  private final ChannelFactory channels;
  private final Map<String, String> environment;

  /** Channels over the network (Netty, from grpc-netty-shaded at run time). */
  static final ChannelFactory NETWORK =
      (target, credentials) -> Grpc.newChannelBuilder(target, credentials).build();

  /** The production command: channels over the network, this process's environment. */
  public IdgenCli() {
    this(NETWORK, System.getenv());
  }

  IdgenCli(ChannelFactory channels, Map<String, String> environment) {
    this.channels = Objects.requireNonNull(channels, "channels");
    this.environment = Map.copyOf(environment);
  }

  public static void main(String[] args) {
    System.exit(commandLine(new IdgenCli()).execute(args));
  }

  /** The command line of {@code cli}, with its error handling and exit codes; tests run it too. */
  static CommandLine commandLine(IdgenCli cli) {
    CommandLine commandLine = new CommandLine(cli);
    commandLine.setCaseInsensitiveEnumValuesAllowed(true);
    commandLine.setExecutionExceptionHandler(IdgenCli::handleExecutionException);
    commandLine.setParameterExceptionHandler(IdgenCli::handleParameterException);
    Map<String, String> exitCodes = new LinkedHashMap<>();
    for (String line : ExitCodes.helpList()) {
      int colon = line.indexOf(':');
      exitCodes.put(" " + line.substring(0, colon), line.substring(colon + 1));
    }
    setExitCodeHelp(commandLine, exitCodes);
    return commandLine;
  }

  private static void setExitCodeHelp(CommandLine commandLine, Map<String, String> exitCodes) {
    commandLine.getCommandSpec().usageMessage()
        .exitCodeListHeading("%nExit codes:%n")
        .exitCodeList(exitCodes);
    for (CommandLine sub : commandLine.getSubcommands().values()) {
      setExitCodeHelp(sub, exitCodes);
    }
  }

  /** The one place that maps failures to messages and exit codes. */
  private static int handleExecutionException(Exception e, CommandLine commandLine,
      CommandLine.ParseResult parseResult) {
    PrintWriter err = commandLine.getErr();
    if (e instanceof StatusRuntimeException status) {
      String description = status.getStatus().getDescription();
      Throwable cause = status.getStatus().getCause();
      err.println("idgen: " + status.getStatus().getCode()
          + (description == null || description.isEmpty() ? "" : ": " + description)
          + (cause == null || cause.getMessage() == null ? "" : " (" + cause.getMessage() + ")"));
      err.flush();
      return ExitCodes.of(status.getStatus().getCode());
    }
    err.println("idgen: " + e);
    err.flush();
    return ExitCodes.FAILED;
  }

  private static int handleParameterException(ParameterException e, String[] args) {
    CommandLine commandLine = e.getCommandLine();
    PrintWriter err = commandLine.getErr();
    err.println("idgen: " + e.getMessage());
    err.println("Try '" + commandLine.getCommandSpec().qualifiedName() + " --help' for more information.");
    err.flush();
    return ExitCodes.USAGE;
  }

  /** The connection settings of this run, with the defaults and the environment applied. */
  Connection connection(CommandLine commandLine) {
    return connection(commandLine, DEFAULT_DEADLINE);
  }

  /** {@link #connection(CommandLine)} for a command whose calls need a longer default deadline. */
  Connection connection(CommandLine commandLine, Duration defaultDeadline) {
    String resolvedTarget = target != null ? target
        : environment.getOrDefault(TARGET_VARIABLE, DEFAULT_TARGET);
    String resolvedToken = token != null ? token : environment.get(TOKEN_VARIABLE);
    if (resolvedToken != null && resolvedToken.isBlank()) {
      resolvedToken = null;
    }
    Duration resolvedDeadline = deadline != null ? deadline : defaultDeadline;
    Connection connection = new Connection(resolvedTarget, plaintext, caCert, clientCert, clientKey,
        resolvedToken, resolvedDeadline);
    String problem = connection.problem();
    if (problem != null) {
      throw new ParameterException(commandLine, problem);
    }
    return connection;
  }

  OutputFormat output() {
    return output != null ? output : OutputFormat.text;
  }

  ChannelFactory channels() {
    return channels;
  }

  /** {@code --version}: the build's version. */
  static final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      Properties properties = new Properties();
      try (InputStream in = IdgenCli.class.getResourceAsStream("/dev/idgen/cli/version.properties")) {
        if (in != null) {
          properties.load(in);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return new String[] {"idgen " + properties.getProperty("version", "unknown")};
    }
  }
}
