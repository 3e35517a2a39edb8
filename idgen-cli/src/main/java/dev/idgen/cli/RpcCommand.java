package dev.idgen.cli;

import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A subcommand that makes gRPC calls: opens the channel of the global options, runs, closes it. Status
 * failures propagate to {@link IdgenCli}, which reports them.
 */
abstract class RpcCommand implements Callable<Integer> {

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  @ParentCommand
  private IdgenCli cli;

  @Spec
  private CommandSpec spec;

  /** Makes this command's calls and writes its output. */
  abstract void run(Calls calls, Output out);

  /** {@link #run} and the exit code of a run that went through: OK unless a command reports per-row failures. */
  int execute(Calls calls, Output out) {
    run(calls, out);
    return ExitCodes.OK;
  }

  /**
   * Checks what picocli cannot (options that go together), before anything is opened.
   *
   * @throws ParameterException a usage error
   */
  void checkOptions(CommandLine commandLine) {}

  @Override
  public final Integer call() throws InterruptedException {
    checkOptions(spec.commandLine());
    Connection connection = cli.connection(spec.commandLine(), defaultDeadline());
    io.grpc.ChannelCredentials credentials;
    try {
      credentials = connection.credentials();
    } catch (IOException | IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(),
          "cannot use the TLS files given: " + e.getMessage());
    }
    ManagedChannel channel = cli.channels().open(connection.target(), credentials);
    try {
      Channel calls = connection.token() == null ? channel
          : ClientInterceptors.intercept(channel, bearer(connection.token()));
      Output out = new Output(spec.commandLine().getOut(), cli.output());
      try {
        return execute(new Calls(calls, connection.deadline()), out);
      } finally {
        out.flush();
      }
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(2, TimeUnit.SECONDS);
    }
  }

  /** The deadline of each call when {@code --deadline} is not given. */
  Duration defaultDeadline() {
    return IdgenCli.DEFAULT_DEADLINE;
  }

  private static ClientInterceptor bearer(String token) {
    String value = "Bearer " + token;
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options,
          Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            headers.put(AUTHORIZATION, value);
            super.start(listener, headers);
          }
        };
      }
    };
  }

  /** Stubs whose deadline starts when they are asked for: one per call. */
  record Calls(Channel channel, Duration deadline) {

    SequenceAdminGrpc.SequenceAdminBlockingStub admin() {
      return SequenceAdminGrpc.newBlockingStub(channel)
          .withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
    }

    IdGenGrpc.IdGenBlockingStub idGen() {
      return IdGenGrpc.newBlockingStub(channel)
          .withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
    }
  }
}
