package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.ListSequencesResponse;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.cli.CliRunner.Result;
import dev.idgen.server.EmbeddedDaemon;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every subcommand against the real daemon (production modules, embedded store), in-process: output,
 * exit codes, and the server's errors on stderr.
 */
class IdgenCliTest {

  @TempDir
  Path dataDir;

  /** The methods called, in order (server side). */
  private final List<String> calls = Collections.synchronizedList(new ArrayList<>());
  /** The authorization header of each call, "" when absent. */
  private final List<String> authorizations = Collections.synchronizedList(new ArrayList<>());

  private EmbeddedDaemon daemon;

  @AfterEach
  void stop() {
    if (daemon != null) {
      daemon.close();
    }
  }

  private CliRunner cli() {
    return cli(Map.of(), recorder());
  }

  private CliRunner cli(Map<String, String> environment, ServerInterceptor interceptor) {
    daemon = EmbeddedDaemon.inProcess(dataDir, List.of(interceptor));
    return CliRunner.inProcess(daemon.inProcessName(), environment);
  }

  private ServerInterceptor recorder() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        calls.add(call.getMethodDescriptor().getBareMethodName());
        String authorization = headers.get(RpcCommand.AUTHORIZATION);
        authorizations.add(authorization == null ? "" : authorization);
        return next.startCall(call, headers);
      }
    };
  }

  // create

  @Test
  void should_create_a_sequence_and_print_its_settings() {
    Result result = cli().run("create", "orders", "--start", "42000", "--max", "2147483647",
        "--stripes", "2", "--node-block-size", "500", "--dc-block-size", "50000");

    assertThat(result.exitCode()).isZero();
    assertThat(result.err()).isEmpty();
    assertThat(result.out())
        .contains("name:             orders")
        .contains("start:            42000")
        .contains("max:              2147483647")
        .contains("stripes:          2")
        .contains("node block size:  500")
        .contains("dc block size:    50000")
        .contains("ordering:         per-server")
        .doesNotContain("home datacenter", "owner");
  }

  @Test
  void should_print_the_created_sequence_as_protobuf_json() throws Exception {
    Result result = cli().run("create", "orders", "--start", "42000", "--output", "json");

    assertThat(result.exitCode()).isZero();
    Sequence.Builder printed = Sequence.newBuilder();
    JsonFormat.parser().merge(result.out(), printed);
    assertThat(printed.getName()).isEqualTo("orders");
    assertThat(printed.getStart()).isEqualTo(42000);
    assertThat(printed.getMax()).isEqualTo(Long.MAX_VALUE);
    assertThat(printed.getStripes()).isEqualTo(1);
  }

  @Test
  void should_exit_with_already_exists_when_the_name_is_taken() {
    CliRunner cli = cli();
    assertThat(cli.run("create", "orders").exitCode()).isZero();

    Result result = cli.run("create", "orders", "--start", "5");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.ALREADY_EXISTS).isEqualTo(16);
    assertThat(result.out()).isEmpty();
    assertThat(result.err()).startsWith("idgen: ALREADY_EXISTS: ").contains("orders");
  }

  @Test
  void should_exit_with_invalid_argument_when_a_setting_is_out_of_range() {
    Result result = cli().run("create", "orders", "--stripes", "0");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.INVALID_ARGUMENT).isEqualTo(13);
    assertThat(result.err()).startsWith("idgen: INVALID_ARGUMENT: ").contains("stripes");
  }

  @Test
  void should_reject_an_unknown_ordering_as_a_usage_error() {
    Result result = cli().run("create", "orders", "--ordering", "sideways");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err()).contains("--ordering").contains("strict or per-server");
    assertThat(calls).isEmpty();
  }

  @Test
  void should_reject_a_home_datacenter_without_strict_ordering_as_a_usage_error() {
    CliRunner cli = cli();

    Result alone = cli.run("create", "orders", "--home-datacenter", "dc1");
    Result perServer = cli.run("create", "orders", "--home-datacenter", "dc1", "--ordering", "per-server");

    assertThat(alone.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(alone.err()).contains("--home-datacenter needs --ordering strict").contains("idgen create --help");
    assertThat(perServer.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(calls).isEmpty();
    assertThat(cli.opened).as("no channel opened").isEmpty();
  }

  @Test
  void should_exit_with_invalid_argument_for_a_malformed_name() {
    Result result = cli().run("create", "no spaces please");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.INVALID_ARGUMENT);
    assertThat(result.err()).startsWith("idgen: INVALID_ARGUMENT: ");
  }

  // get

  @Test
  void should_get_a_sequence_with_its_live_state() {
    CliRunner cli = cli();
    cli.run("create", "orders", "--start", "100", "--max", "1000000", "--node-block-size", "100");
    cli.run("allocate", "orders", "--count", "10");

    Result result = cli.run("get", "orders");

    assertThat(result.exitCode()).isZero();
    assertThat(result.out())
        .contains("name:             orders")
        .contains("start:            100")
        .contains("max:              1000000")
        .contains("server reserve:   90")
        .containsPattern("stripe 0: +next unreserved \\d+, remaining \\d+");
  }

  @Test
  void should_exit_with_not_found_for_an_unknown_sequence() {
    Result result = cli().run("get", "missing");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.NOT_FOUND).isEqualTo(15);
    assertThat(result.out()).isEmpty();
    assertThat(result.err()).startsWith("idgen: NOT_FOUND: ").contains("missing");
  }

  // list

  @Test
  void should_list_every_sequence_in_name_order_across_pages() {
    CliRunner cli = cli();
    for (String name : List.of("e", "c", "a", "d", "b")) {
      assertThat(cli.run("create", name).exitCode()).isZero();
    }
    calls.clear();

    Result result = cli.run("list", "--page-size", "2");

    assertThat(result.exitCode()).isZero();
    assertThat(calls).containsExactly("ListSequences", "ListSequences", "ListSequences");
    List<String> names = result.out().lines().skip(1).map(line -> line.split("\\s+")[0]).toList();
    assertThat(names).containsExactly("a", "b", "c", "d", "e");
    assertThat(result.out().lines().findFirst()).hasValueSatisfying(header ->
        assertThat(header).startsWith("NAME").contains("HEADROOM").endsWith("ORDERING"));
    assertThat(result.out().lines().skip(1)).allMatch(line -> line.endsWith(" per-server"));
  }

  @Test
  void should_list_as_one_json_object() throws Exception {
    CliRunner cli = cli();
    cli.run("create", "a");
    cli.run("create", "b");

    Result result = cli.run("list", "-o", "json", "--page-size", "1");

    assertThat(result.exitCode()).isZero();
    ListSequencesResponse.Builder printed = ListSequencesResponse.newBuilder();
    JsonFormat.parser().merge(result.out(), printed);
    assertThat(printed.getSequencesList()).extracting(Sequence::getName).containsExactly("a", "b");
  }

  @Test
  void should_print_only_the_header_when_there_are_no_sequences() {
    Result result = cli().run("list");

    assertThat(result.exitCode()).isZero();
    assertThat(result.out().lines()).hasSize(1);
  }

  @Test
  void should_exit_with_invalid_argument_for_a_page_size_out_of_range() {
    Result result = cli().run("list", "--page-size", "-1");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.INVALID_ARGUMENT);
    assertThat(result.err()).startsWith("idgen: INVALID_ARGUMENT: ").contains("page_size");
  }

  // advance

  @Test
  void should_advance_a_sequence_so_that_no_id_at_or_below_the_floor_follows() {
    CliRunner cli = cli();
    cli.run("create", "orders");

    Result advanced = cli.run("advance", "orders", "--floor", "50000");
    Result allocated = cli.run("allocate", "orders");

    assertThat(advanced.exitCode()).isZero();
    assertThat(advanced.out()).contains("name:             orders");
    assertThat(allocated.exitCode()).isZero();
    assertThat(Long.parseLong(allocated.out().trim())).isGreaterThan(50000);
  }

  @Test
  void should_exit_with_not_found_when_advancing_an_unknown_sequence() {
    Result result = cli().run("advance", "missing", "--floor", "10");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
    assertThat(result.err()).startsWith("idgen: NOT_FOUND: ");
  }

  @Test
  void should_exit_with_failed_precondition_when_advancing_past_the_max() {
    CliRunner cli = cli();
    cli.run("create", "small", "--max", "100");

    Result result = cli.run("advance", "small", "--floor", "100");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.FAILED_PRECONDITION).isEqualTo(19);
    assertThat(result.err()).startsWith("idgen: FAILED_PRECONDITION: ");
  }

  @Test
  void should_reject_advance_without_a_floor_as_a_usage_error() {
    Result result = cli().run("advance", "orders");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE).isEqualTo(2);
    assertThat(result.err()).contains("--floor").contains("idgen advance --help");
    assertThat(calls).isEmpty();
  }

  // allocate

  @Test
  void should_allocate_one_id_by_default() {
    CliRunner cli = cli();
    cli.run("create", "orders", "--start", "42000");

    Result result = cli.run("allocate", "orders");

    assertThat(result.exitCode()).isZero();
    assertThat(result.out()).isEqualTo("42000" + System.lineSeparator());
  }

  @Test
  void should_print_each_allocated_id_on_its_own_line() {
    CliRunner cli = cli();
    cli.run("create", "orders");

    Result result = cli.run("allocate", "orders", "--count", "5");

    assertThat(result.exitCode()).isZero();
    assertThat(result.out().lines()).containsExactly("1", "2", "3", "4", "5");
  }

  @Test
  void should_print_ranges_with_their_stride() {
    CliRunner cli = cli();
    cli.run("create", "dense");
    cli.run("create", "striped", "--stripes", "2");

    Result dense = cli.run("allocate", "dense", "-n", "10", "--ranges");
    Result striped = cli.run("allocate", "striped", "-n", "3", "--ranges");

    assertThat(dense.out().lines()).containsExactly("1..10 count=10 stride=1");
    assertThat(striped.exitCode()).isZero();
    assertThat(striped.out().lines()).allMatch(line -> line.endsWith("stride=2"));
    long total = striped.out().lines()
        .mapToLong(line -> Long.parseLong(line.replaceAll(".*count=(\\d+).*", "$1"))).sum();
    assertThat(total).isEqualTo(3);
  }

  @Test
  void should_print_allocated_ranges_as_json_lines() throws Exception {
    CliRunner cli = cli();
    cli.run("create", "orders", "--start", "7");

    Result result = cli.run("allocate", "orders", "--count", "3", "--output", "json");

    assertThat(result.exitCode()).isZero();
    List<String> lines = result.out().lines().toList();
    assertThat(lines).hasSize(1);
    IdRange.Builder range = IdRange.newBuilder();
    JsonFormat.parser().merge(lines.get(0), range);
    // Servers stamp each range with its sequence's ordering since 0.2; before, it was unset.
    assertThat(range.getOrdering()).isIn(Ordering.ORDERING_PER_SERVER, Ordering.ORDERING_UNSPECIFIED);
    assertThat(range.clearOrdering().build())
        .isEqualTo(IdRange.newBuilder().setFirst(7).setCount(3).setStride(1).build());
  }

  @Test
  void should_print_the_ids_received_before_the_sequence_ran_out() {
    CliRunner cli = cli();
    cli.run("create", "tiny", "--start", "1", "--max", "3");

    Result result = cli.run("allocate", "tiny", "--count", "5");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.OUT_OF_RANGE).isEqualTo(21);
    assertThat(result.out().lines()).containsExactly("1", "2", "3");
    assertThat(result.err()).startsWith("idgen: OUT_OF_RANGE: ").contains("tiny");
  }

  @Test
  void should_exit_with_not_found_when_allocating_from_an_unknown_sequence() {
    Result result = cli().run("allocate", "nope", "--count", "3");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
    assertThat(result.out()).isEmpty();
    assertThat(result.err()).startsWith("idgen: NOT_FOUND: ").contains("nope");
  }

  @Test
  void should_exit_with_invalid_argument_for_a_count_of_zero() {
    CliRunner cli = cli();
    cli.run("create", "orders");

    Result result = cli.run("allocate", "orders", "--count", "0");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.INVALID_ARGUMENT);
    assertThat(result.err()).startsWith("idgen: INVALID_ARGUMENT: ");
  }

  // global options

  @Test
  void should_take_the_global_options_before_or_after_the_subcommand() {
    CliRunner cli = cli();

    cli.run("--target", "before:1", "--plaintext", "list");
    cli.run("list", "--target", "after:2", "--plaintext");

    assertThat(cli.opened).extracting(CliRunner.Opened::target).containsExactly("before:1", "after:2");
    assertThat(cli.opened).allSatisfy(opened ->
        assertThat(opened.credentials()).isInstanceOf(InsecureChannelCredentials.class));
  }

  @Test
  void should_take_the_target_from_the_environment_then_the_default() {
    CliRunner fromEnvironment = cli(Map.of("IDGEN_TARGET", "idgen.example:7443"), recorder());
    fromEnvironment.run("list");
    CliRunner byDefault = CliRunner.inProcess(daemon.inProcessName(), Map.of());
    byDefault.run("list");
    CliRunner overridden = CliRunner.inProcess(daemon.inProcessName(), Map.of("IDGEN_TARGET", "env:1"));
    overridden.run("list", "--target", "flag:2");

    assertThat(fromEnvironment.opened).extracting(CliRunner.Opened::target)
        .containsExactly("idgen.example:7443");
    assertThat(byDefault.opened).extracting(CliRunner.Opened::target).containsExactly("localhost:7070");
    assertThat(overridden.opened).extracting(CliRunner.Opened::target).containsExactly("flag:2");
  }

  @Test
  void should_use_tls_unless_plaintext_is_asked_for() {
    CliRunner cli = cli();

    cli.run("list");

    assertThat(cli.opened).singleElement().satisfies(opened ->
        assertThat(opened.credentials()).isInstanceOf(TlsChannelCredentials.class));
  }

  @Test
  void should_send_the_token_as_a_bearer_authorization_header() {
    CliRunner cli = cli(Map.of("IDGEN_TOKEN", "from-env"), recorder());

    cli.run("list", "--token", "s3cret");
    cli.run("list");
    CliRunner.inProcess(daemon.inProcessName(), Map.of()).run("list");

    assertThat(authorizations).containsExactly("Bearer s3cret", "Bearer from-env", "");
  }

  @Test
  void should_exit_with_unauthenticated_when_the_server_refuses_the_token() {
    ServerInterceptor requireToken = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        if (!"Bearer good".equals(headers.get(RpcCommand.AUTHORIZATION))) {
          call.close(Status.UNAUTHENTICATED.withDescription("a valid bearer token is required"),
              new Metadata());
          return new ServerCall.Listener<>() {};
        }
        return next.startCall(call, headers);
      }
    };
    CliRunner cli = cli(Map.of(), requireToken);

    Result refused = cli.run("list", "--token", "bad");
    Result accepted = cli.run("list", "--token", "good");

    assertThat(refused.exitCode()).isEqualTo(ExitCodes.UNAUTHENTICATED).isEqualTo(26);
    assertThat(refused.err()).isEqualTo("idgen: UNAUTHENTICATED: a valid bearer token is required"
        + System.lineSeparator());
    assertThat(accepted.exitCode()).isZero();
  }

  @Test
  void should_reject_plaintext_combined_with_tls_files() throws Exception {
    Path ca = Files.writeString(dataDir.resolve("ca.pem"), "not used");

    Result result = cli().run("list", "--plaintext", "--ca-cert", ca.toString());

    assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err()).contains("--plaintext cannot be combined");
    assertThat(calls).isEmpty();
  }

  @Test
  void should_reject_a_client_certificate_without_its_key() throws Exception {
    Path cert = Files.writeString(dataDir.resolve("client.pem"), "not used");

    Result result = cli().run("list", "--client-cert", cert.toString());

    assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err()).contains("--client-cert and --client-key go together");
  }

  @Test
  void should_reject_a_missing_or_malformed_ca_file_as_a_usage_error() throws Exception {
    Path garbage = Files.writeString(dataDir.resolve("garbage.pem"), "not a certificate");

    Result missing = cli().run("list", "--ca-cert", dataDir.resolve("absent.pem").toString());
    Result malformed = CliRunner.inProcess(daemon.inProcessName(), Map.of())
        .run("list", "--ca-cert", garbage.toString());

    assertThat(missing.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(missing.err()).contains("cannot read").contains("absent.pem");
    assertThat(malformed.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(malformed.err()).contains("cannot use the TLS files given");
    assertThat(calls).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"0s", "-5s", "soon"})
  void should_reject_a_deadline_that_is_not_a_positive_duration(String deadline) {
    Result result = cli().run("list", "--deadline", deadline);

    assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err()).contains("deadline");
  }

  @Test
  void should_accept_short_and_iso_deadlines() {
    CliRunner cli = cli();

    assertThat(cli.run("list", "--plaintext", "--deadline", "500ms").exitCode()).isZero();
    assertThat(cli.run("list", "--plaintext", "--deadline", "PT2S").exitCode()).isZero();
  }

  // usage and help

  @ParameterizedTest
  @ValueSource(strings = {"create", "get", "list", "advance", "allocate"})
  void should_print_help_for_every_subcommand(String subcommand) {
    Result result = cli().run(subcommand, "--help");

    assertThat(result.exitCode()).isZero();
    assertThat(result.out()).startsWith("Usage: idgen " + subcommand).contains("--target").contains("Exit codes:");
    assertThat(calls).isEmpty();
  }

  @Test
  void should_describe_the_ordering_options_in_the_help_of_create() {
    Result result = cli().run("create", "--help");

    assertThat(result.out()).contains("--ordering=ORDERING").contains("--home-datacenter=NAME")
        .contains("strict").contains("per-server");
  }

  @Test
  void should_print_help_with_the_exit_codes() {
    Result result = cli().run("--help");

    assertThat(result.exitCode()).isZero();
    assertThat(result.out()).startsWith("Usage: idgen")
        .contains("create", "get", "list", "advance", "allocate")
        .containsPattern("15 +NOT_FOUND")
        .containsPattern("24 +UNAVAILABLE");
  }

  @Test
  void should_exit_with_usage_without_a_subcommand_or_with_an_unknown_option() {
    CliRunner cli = cli();

    Result none = cli.run();
    Result unknown = cli.run("get", "orders", "--colour");
    Result notANumber = cli.run("allocate", "orders", "--count", "many");

    assertThat(none.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(none.err()).contains("subcommand");
    assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(unknown.err()).contains("--colour");
    assertThat(notANumber.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(calls).isEmpty();
  }

  @Test
  void should_map_each_status_code_to_a_distinct_exit_code() {
    List<Integer> codes = new ArrayList<>();
    for (Status.Code code : Status.Code.values()) {
      if (code != Status.Code.OK) {
        codes.add(ExitCodes.of(code));
      }
    }

    assertThat(codes).doesNotHaveDuplicates()
        .doesNotContain(ExitCodes.OK, ExitCodes.FAILED, ExitCodes.USAGE)
        .allMatch(code -> code < 126); // shells reserve 126 and up
    assertThat(SequenceAdminGrpc.SERVICE_NAME).isEqualTo("idgen.v1.SequenceAdmin");
  }
}
