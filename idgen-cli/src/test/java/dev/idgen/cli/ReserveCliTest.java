package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import dev.idgen.api.v1.ReserveRangeResponse;
import dev.idgen.cli.CliRunner.Result;
import dev.idgen.server.EmbeddedDaemon;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code idgen reserve} and {@code idgen reservations} against the real daemon (embedded store), in-process. */
class ReserveCliTest {

  @TempDir
  Path dataDir;

  private EmbeddedDaemon daemon;

  @AfterEach
  void stop() {
    if (daemon != null) {
      daemon.close();
    }
  }

  private CliRunner cli(List<ServerInterceptor> interceptors) {
    daemon = EmbeddedDaemon.inProcess(dataDir, interceptors);
    return CliRunner.inProcess(daemon.inProcessName(), Map.of());
  }

  @Test
  void should_reserve_a_range_print_it_and_return_the_same_range_to_a_retry_with_its_request_id() throws Exception {
    CliRunner cli = cli(List.of());
    assertThat(cli.run("create", "orders", "--start", "42000").exitCode()).isZero();
    assertThat(cli.run("allocate", "orders", "--count", "5").exitCode()).isZero();

    Result reserved = cli.run("reserve", "orders", "1000", "--request-id", "import-1");
    Result retried = cli.run("reserve", "orders", "1000", "--request-id", "import-1", "-o", "json");

    assertThat(reserved.exitCode()).isZero();
    assertThat(reserved.out()).contains("sequence:     orders").contains("count:        1000")
        .contains("request id:   import-1").doesNotContain("replayed");
    long first = Long.parseLong(reserved.out().replaceAll("(?s).*first: +(\\d+).*", "$1"));
    assertThat(first).isGreaterThanOrEqualTo(42_005);
    assertThat(reserved.out()).contains("last:         " + (first + 999));
    ReserveRangeResponse.Builder json = ReserveRangeResponse.newBuilder();
    JsonFormat.parser().merge(retried.out(), json);
    assertThat(json.getReplayed()).isTrue();
    assertThat(json.getReservation().getFirst()).isEqualTo(first);

    Result listed = cli.run("reservations", "orders");
    assertThat(listed.exitCode()).isZero();
    assertThat(listed.out().lines().toList()).hasSize(2);
    assertThat(listed.out()).contains("FIRST").contains("REQUEST_ID").contains(Long.toString(first))
        .contains("import-1");
  }

  @Test
  void should_give_each_run_without_a_request_id_a_range_of_its_own() {
    CliRunner cli = cli(List.of());
    cli.run("create", "orders");

    Result one = cli.run("reserve", "orders", "10");
    Result two = cli.run("reserve", "orders", "10");

    assertThat(one.out()).contains("first:        1\n").contains("last:         10\n");
    assertThat(two.out()).contains("first:        11\n");
    assertThat(cli.run("reservations", "orders", "--page-size", "1").out().lines().toList()).hasSize(3);
  }

  @Test
  void should_exit_with_the_status_code_of_a_refusal() {
    CliRunner cli = cli(List.of());
    cli.run("create", "small", "--max", "100");
    cli.run("create", "striped", "--stripes", "2");

    Result above = cli.run("reserve", "small", "101");
    Result striped = cli.run("reserve", "striped", "5");
    Result missing = cli.run("reservations", "nope");

    assertThat(above.exitCode()).isEqualTo(ExitCodes.OUT_OF_RANGE);
    assertThat(above.err()).contains("OUT_OF_RANGE").contains("only 100 are left");
    assertThat(striped.exitCode()).isEqualTo(ExitCodes.FAILED_PRECONDITION);
    assertThat(striped.err()).contains("2 stripes");
    assertThat(missing.exitCode()).isEqualTo(ExitCodes.of(Status.Code.NOT_FOUND));
  }

  @Test
  void should_name_the_request_id_to_retry_with_when_the_server_is_unavailable() {
    ServerInterceptor unavailable = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        if (call.getMethodDescriptor().getBareMethodName().equals("ReserveRange")) {
          call.close(Status.UNAVAILABLE.withDescription("injected"), new Metadata());
          return new ServerCall.Listener<>() {};
        }
        return next.startCall(call, headers);
      }
    };
    CliRunner cli = cli(List.of(unavailable));

    Result result = cli.run("reserve", "orders", "10", "--request-id", "keep-me");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(result.err()).contains("injected").contains("idgen reserve orders 10 --request-id keep-me");
  }

  @Test
  void should_print_help_for_both_commands() {
    CliRunner cli = cli(List.of());

    assertThat(cli.run("reserve", "--help").out()).startsWith("Usage: idgen reserve").contains("--request-id");
    assertThat(cli.run("reservations", "--help").out()).startsWith("Usage: idgen reservations");
  }
}
