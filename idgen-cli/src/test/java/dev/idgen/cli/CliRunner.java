package dev.idgen.cli;

import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/** Runs {@code idgen} in-process, capturing its exit code, stdout and stderr. */
final class CliRunner {

  /** What one run produced. */
  record Result(int exitCode, String out, String err) {}

  /** Every channel the runs asked for: target and credentials. */
  record Opened(String target, ChannelCredentials credentials) {}

  private final IdgenCli.ChannelFactory factory;
  private final Map<String, String> environment;
  final List<Opened> opened = new ArrayList<>();

  private CliRunner(IdgenCli.ChannelFactory factory, Map<String, String> environment) {
    this.factory = factory;
    this.environment = environment;
  }

  /** Every target leads to the in-process server {@code name}. */
  static CliRunner inProcess(String name, Map<String, String> environment) {
    return new CliRunner((target, credentials) ->
        InProcessChannelBuilder.forName(name).directExecutor().build(), environment);
  }

  /** The production channels, over the network. */
  static CliRunner network() {
    return new CliRunner(IdgenCli.NETWORK, Map.of());
  }

  Result run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    IdgenCli cli = new IdgenCli((target, credentials) -> {
      opened.add(new Opened(target, credentials));
      ManagedChannel channel = factory.open(target, credentials);
      return channel;
    }, environment);
    CommandLine commandLine = IdgenCli.commandLine(cli);
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int code = commandLine.execute(args);
    return new Result(code, out.toString(), err.toString());
  }
}
