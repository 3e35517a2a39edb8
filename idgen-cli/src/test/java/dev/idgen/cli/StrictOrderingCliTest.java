package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.ListSequencesResponse;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.cli.CliRunner.Result;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code create --ordering/--home-datacenter}, and how {@code get} and {@code list} show a sequence's
 * ordering, home datacenter and owner: against an in-process fake {@code SequenceAdmin} that records the
 * requests and answers what a server of 0.2 answers for strict sequences (owner and epoch once a server
 * claimed the sequence), so that the command line is tested on its own.
 */
class StrictOrderingCliTest {

  private static final String HEADER_PATTERN =
      "NAME +START +MAX +STRIPES +REMAINING +HEADROOM +ORDERING +HOME +OWNER +EPOCH";

  /** The fake server's sequences, by name; create adds one as a 0.2 server would define it. */
  private final Map<String, Sequence> sequences = new ConcurrentHashMap<>();
  private final List<CreateSequenceRequest> created = new CopyOnWriteArrayList<>();
  private Server server;
  private CliRunner cli;

  @BeforeEach
  void start() throws IOException {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).directExecutor().addService(new FakeAdmin()).build().start();
    cli = CliRunner.inProcess(name, Map.of());
  }

  @AfterEach
  void stop() throws InterruptedException {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private final class FakeAdmin extends SequenceAdminGrpc.SequenceAdminImplBase {
    @Override
    public void createSequence(CreateSequenceRequest request, StreamObserver<Sequence> responses) {
      created.add(request);
      Ordering ordering = request.getOrdering() == Ordering.ORDERING_STRICT ? Ordering.ORDERING_STRICT
          : Ordering.ORDERING_PER_SERVER;
      Sequence.Builder sequence = Sequence.newBuilder().setName(request.getName()).setStart(1)
          .setMax(Long.MAX_VALUE).setStripes(1).setNodeBlockSize(100_000_000).setDcBlockSize(1_000_000_000_000L)
          .setOrdering(ordering).setRemaining(Long.MAX_VALUE).setHeadroom(1.0);
      if (ordering == Ordering.ORDERING_STRICT) {
        sequence.setHomeDatacenter(request.hasHomeDatacenter() ? request.getHomeDatacenter() : "dc1");
      }
      sequences.put(request.getName(), sequence.build());
      responses.onNext(sequence.build());
      responses.onCompleted();
    }

    @Override
    public void getSequence(GetSequenceRequest request, StreamObserver<Sequence> responses) {
      Sequence sequence = sequences.get(request.getName());
      if (sequence == null) {
        responses.onError(Status.NOT_FOUND.withDescription("no sequence named '" + request.getName() + "'")
            .asRuntimeException());
        return;
      }
      responses.onNext(sequence);
      responses.onCompleted();
    }

    @Override
    public void listSequences(ListSequencesRequest request, StreamObserver<ListSequencesResponse> responses) {
      responses.onNext(ListSequencesResponse.newBuilder()
          .addAllSequences(sequences.values().stream()
              .sorted((a, b) -> a.getName().compareTo(b.getName())).toList())
          .build());
      responses.onCompleted();
    }
  }

  /** What a server answers once one of its servers owns the strict sequence {@code name}. */
  private void claimed(String name, String owner, long epoch) {
    sequences.computeIfPresent(name, (n, s) -> s.toBuilder().setOwner(owner).setOwnerEpoch(epoch).build());
  }

  @Test
  void should_create_a_strict_sequence_in_a_home_datacenter_and_print_it() {
    Result result = cli.run("create", "invoices", "--ordering", "strict", "--home-datacenter", "dc2");

    assertThat(result.exitCode()).isZero();
    assertThat(result.err()).isEmpty();
    assertThat(created).singleElement().satisfies(request -> {
      assertThat(request.getOrdering()).isEqualTo(Ordering.ORDERING_STRICT);
      assertThat(request.hasHomeDatacenter()).isTrue();
      assertThat(request.getHomeDatacenter()).isEqualTo("dc2");
    });
    assertThat(result.out())
        .contains("ordering:         strict")
        .contains("home datacenter:  dc2")
        .doesNotContain("owner"); // not claimed yet
  }

  @Test
  void should_send_the_ordering_only_when_it_is_given() {
    cli.run("create", "a");
    cli.run("create", "b", "--ordering", "per-server");
    cli.run("create", "c", "--ordering", "STRICT");

    assertThat(created).extracting(CreateSequenceRequest::getOrdering).containsExactly(
        Ordering.ORDERING_UNSPECIFIED, Ordering.ORDERING_PER_SERVER, Ordering.ORDERING_STRICT);
    assertThat(created).noneMatch(CreateSequenceRequest::hasHomeDatacenter);
  }

  @Test
  void should_get_a_strict_sequence_with_its_owner_and_epoch() {
    cli.run("create", "invoices", "--ordering", "strict");
    claimed("invoices", "10.0.0.7:7070", 42);

    Result result = cli.run("get", "invoices");

    assertThat(result.exitCode()).isZero();
    assertThat(result.out())
        .contains("ordering:         strict")
        .contains("home datacenter:  dc1")
        .contains("owner:            10.0.0.7:7070")
        .contains("owner epoch:      42");
  }

  @Test
  void should_get_a_per_server_sequence_without_home_or_owner() {
    cli.run("create", "orders");

    Result result = cli.run("get", "orders");

    assertThat(result.out()).contains("ordering:         per-server").doesNotContain("home datacenter", "owner");
  }

  @Test
  void should_print_the_strict_fields_as_protobuf_json() throws Exception {
    cli.run("create", "invoices", "--ordering", "strict", "--home-datacenter", "dc2");
    claimed("invoices", "10.0.0.7:7070", 3);

    Result result = cli.run("get", "invoices", "-o", "json");

    Sequence.Builder printed = Sequence.newBuilder();
    JsonFormat.parser().merge(result.out(), printed);
    assertThat(printed.getOrdering()).isEqualTo(Ordering.ORDERING_STRICT);
    assertThat(printed.getHomeDatacenter()).isEqualTo("dc2");
    assertThat(printed.getOwner()).isEqualTo("10.0.0.7:7070");
    assertThat(printed.getOwnerEpoch()).isEqualTo(3);
    assertThat(result.out()).contains("\"ordering\": \"ORDERING_STRICT\"");
  }

  @Test
  void should_list_home_owner_and_epoch_columns_when_a_strict_sequence_is_listed() {
    cli.run("create", "invoices", "--ordering", "strict", "--home-datacenter", "dc2");
    cli.run("create", "orders");
    cli.run("create", "receipts", "--ordering", "strict");
    claimed("invoices", "10.0.0.7:7070", 42);

    Result result = cli.run("list");

    assertThat(result.exitCode()).isZero();
    List<String> lines = result.out().lines().toList();
    assertThat(lines.get(0)).matches(HEADER_PATTERN);
    assertThat(lines.get(1).split("\\s+")).containsExactly("invoices", "1", Long.toString(Long.MAX_VALUE), "1",
        Long.toString(Long.MAX_VALUE), "100.00", "%", "strict", "dc2", "10.0.0.7:7070", "42");
    assertThat(lines.get(2).split("\\s+")).endsWith("per-server", "-", "-", "-");
    assertThat(lines.get(3).split("\\s+")).endsWith("strict", "dc1", "-", "-");
  }

  @Test
  void should_list_only_the_ordering_column_without_strict_sequences() {
    cli.run("create", "orders");

    Result result = cli.run("list");

    List<String> lines = result.out().lines().toList();
    assertThat(lines.get(0)).endsWith("ORDERING").doesNotContain("OWNER");
    assertThat(lines.get(1)).endsWith(" per-server");
  }
}
