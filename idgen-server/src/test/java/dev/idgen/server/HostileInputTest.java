package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile input over the whole gRPC API, on the production embedded store and the real transport (Netty on
 * loopback, as clients and grpcurl reach it), drawn from a seeded random
 * generator (the seed is in the test's name, so a failure is replayed by running that case): malformed
 * names (empty, too long, control and non-ASCII characters, lone surrogates), counts of 0, negative,
 * enormous and near the limit, unknown sequences, advancing backwards and past max, sequences near
 * {@code Long.MAX_VALUE} and {@code 2147483647}, and raw bytes that are not a valid protobuf message.
 *
 * <p>The properties: every call ends with a defined status (OK, INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
 * OUT_OF_RANGE, FAILED_PRECONDITION; bytes that do not parse as the request get INVALID_ARGUMENT naming the
 * message type; a request above the size limit gets gRPC's own RESOURCE_EXHAUSTED) and a non-empty message,
 * every error of idgen's with its details ({@link ErrorDetails});
 * the outcome is the one the API documents for that input; no ID is handed out twice, outside its
 * sequence's bounds or at or below an advanced floor; and the server still reports SERVING afterwards.
 */
class HostileInputTest {
  private static final Pattern VALID_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  private static final long LIMIT = 1_000_000; // idgen.limits.max-ids-per-call's default
  private static final Set<Status.Code> DEFINED = EnumSet.of(Status.Code.INVALID_ARGUMENT,
      Status.Code.NOT_FOUND, Status.Code.ALREADY_EXISTS, Status.Code.OUT_OF_RANGE, Status.Code.FAILED_PRECONDITION,
      Status.Code.RESOURCE_EXHAUSTED);

  @TempDir
  Path dir;

  private NettyServer server;
  private final Map<String, IssuedIds> issued = new HashMap<>();
  private final Map<String, Long> floors = new HashMap<>();
  private final Map<String, Sequence> known = new HashMap<>();

  @BeforeEach
  void start() {
    server = NettyServer.startEmbedded(dir);
    create(CreateSequenceRequest.newBuilder().setName("fz-dense").build());
    create(CreateSequenceRequest.newBuilder().setName("fz-striped").setStart(100).setStripes(5)
        .setNodeBlockSize(300).build());
    create(CreateSequenceRequest.newBuilder().setName("fz-int32").setStart(2_147_483_647L - 20_000)
        .setMax(2_147_483_647L).setStripes(2).setNodeBlockSize(500).build());
    create(CreateSequenceRequest.newBuilder().setName("fz-longmax").setStart(Long.MAX_VALUE - 50_000)
        .setStripes(3).setNodeBlockSize(1_000).build());
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1L, 20250610L, -7_777_777_777L})
  void should_answer_every_hostile_call_with_a_defined_status_and_never_repeat_an_id(long seed) {
    Random random = new Random(seed);
    Map<String, Integer> outcomes = new HashMap<>();
    for (int i = 0; i < 1_500; i++) {
      int op = random.nextInt(100);
      String what;
      Status status;
      if (op < 40) {
        what = "allocate";
        status = allocate(randomName(random), randomCount(random));
      } else if (op < 52) {
        what = "create";
        status = createRandom(random);
      } else if (op < 62) {
        what = "get";
        status = get(randomName(random));
      } else if (op < 74) {
        what = "advance";
        status = advance(randomName(random), random);
      } else if (op < 80) {
        what = "list";
        status = list(random);
      } else {
        what = "raw";
        status = raw(random);
      }
      outcomes.merge(what + ":" + status.getCode(), 1, Integer::sum);
    }

    assertThat(server.health("")).isEqualTo(ServingStatus.SERVING);
    assertThat(server.health("idgen.v1.IdGen")).isEqualTo(ServingStatus.SERVING);
    assertThat(server.allocate("fz-dense", 3)).isNotEmpty(); // still allocating
    for (Map.Entry<String, IssuedIds> e : issued.entrySet()) {
      assertThat(e.getValue().duplicates()).as("duplicates in %s", e.getKey()).isZero();
      assertThat(e.getValue().outOfBounds()).as("out of bounds in %s", e.getKey()).isZero();
    }
    // The generator reaches the interesting outcomes, not only one kind of refusal.
    assertThat(outcomes).containsKeys("allocate:OK", "allocate:INVALID_ARGUMENT", "allocate:NOT_FOUND",
        "advance:OK", "create:ALREADY_EXISTS", "create:INVALID_ARGUMENT", "raw:INVALID_ARGUMENT");
    assertThat(outcomes).doesNotContainKeys("raw:UNKNOWN", "raw:INTERNAL");
  }

  @Test
  void should_refuse_a_request_above_the_size_limit_with_resource_exhausted_and_keep_serving() {
    String huge = "n".repeat(100_000); // above the 64 KiB default of idgen.limits.max-inbound-message-size
    Status allocate = call(() -> server.allocate(huge, 1, new ArrayList<>()));
    Status create = call(() -> server.admin().createSequence(CreateSequenceRequest.newBuilder().setName(huge).build()));

    for (Status status : List.of(allocate, create)) {
      assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(status.getDescription()).containsIgnoringCase("size").contains("65536");
    }
    assertThat(server.allocate("fz-dense", 3)).isNotEmpty();
    assertThat(server.health("")).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void should_let_exactly_one_of_many_concurrent_creations_of_a_name_win() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 25; round++) {
        String name = "race-" + round;
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<Status>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          long start = 1 + t * 1_000L; // different settings: the name alone decides
          results.add(pool.submit(() -> {
            barrier.await(30, TimeUnit.SECONDS);
            try {
              server.admin().createSequence(CreateSequenceRequest.newBuilder().setName(name).setStart(start).build());
              return Status.OK;
            } catch (StatusRuntimeException e) {
              return e.getStatus();
            }
          }));
        }
        List<Status.Code> codes = new ArrayList<>();
        for (Future<Status> f : results) {
          Status s = f.get(1, TimeUnit.MINUTES);
          codes.add(s.getCode());
          if (!s.isOk()) {
            assertThat(s.getDescription()).contains(name);
          }
        }

        assertThat(codes).as("round %d", round).containsOnlyOnce(Status.Code.OK)
            .containsOnly(Status.Code.OK, Status.Code.ALREADY_EXISTS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(server.health("")).isEqualTo(ServingStatus.SERVING);
  }

  // --- calls and their expected outcomes -----------------------------------------------------------

  private Status allocate(String name, long count) {
    List<IdRange> received = new ArrayList<>();
    Status status = call(() -> server.allocate(name, count, received));

    record(name, received);
    long got = TestServer.count(received);
    boolean validName = VALID_NAME.matcher(name).matches();
    boolean validCount = count >= 1 && count <= LIMIT;
    if (!validName) {
      assertThat(status.getCode()).as("allocate(%s, %d)", printable(name), count).isEqualTo(Status.Code.INVALID_ARGUMENT);
    } else if (!known.containsKey(name)) {
      assertThat(status.getCode()).as("allocate(%s, %d)", name, count)
          .isIn(Status.Code.NOT_FOUND, validCount ? Status.Code.NOT_FOUND : Status.Code.INVALID_ARGUMENT);
    } else if (!validCount) {
      assertThat(status.getCode()).as("allocate(%s, %d)", name, count).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(status.getDescription()).contains(Long.toString(count));
    } else if (status.isOk()) {
      assertThat(got).as("allocate(%s, %d)", name, count).isEqualTo(count);
    } else {
      assertThat(status.getCode()).as("allocate(%s, %d)", name, count).isEqualTo(Status.Code.OUT_OF_RANGE);
      assertThat(got).isLessThan(count);
    }
    if (!status.isOk()) {
      assertThat(got).isLessThanOrEqualTo(status.getCode() == Status.Code.OUT_OF_RANGE ? count : 0);
    }
    return status;
  }

  private Status createRandom(Random random) {
    String name = random.nextInt(4) == 0 ? pick(random, new ArrayList<>(known.keySet())) : randomName(random);
    CreateSequenceRequest.Builder request = CreateSequenceRequest.newBuilder().setName(name);
    if (random.nextBoolean()) {
      request.setStart(pick(random, List.of(-1L, 0L, 1L, Long.MAX_VALUE, Long.MIN_VALUE, 2_147_483_600L,
          (long) random.nextInt(1_000_000))));
    }
    if (random.nextBoolean()) {
      request.setMax(pick(random, List.of(-1L, 0L, 2_147_483_647L, Long.MAX_VALUE, (long) random.nextInt(5_000_000))));
    }
    if (random.nextBoolean()) {
      request.setStripes(pick(random, List.of(-1, 0, 1, 2, 64, 65, Integer.MAX_VALUE, Integer.MIN_VALUE)));
    }
    if (random.nextBoolean()) {
      request.setNodeBlockSize(pick(random, List.of(-5L, 0L, 1L, 1_000L, 1_000_000_000L, 1_000_000_001L, Long.MAX_VALUE)));
    }
    if (random.nextBoolean()) {
      request.setDcBlockSize(pick(random, List.of(-5L, 0L, 1L, 1_000L, 1_000_000_000L, Long.MAX_VALUE)));
    }
    Status status = create(request.build());
    if (!VALID_NAME.matcher(name).matches()) {
      assertThat(status.getCode()).as("create(%s)", printable(name)).isEqualTo(Status.Code.INVALID_ARGUMENT);
    } else if (status.getCode() == Status.Code.ALREADY_EXISTS) {
      assertThat(known).containsKey(name);
    }
    return status;
  }

  private Status create(CreateSequenceRequest request) {
    boolean existed = known.containsKey(request.getName());
    Sequence[] created = new Sequence[1];
    Status status = call(() -> created[0] = server.admin().createSequence(request));
    if (status.isOk()) {
      assertThat(existed).as("created %s twice", request.getName()).isFalse();
      known.put(request.getName(), created[0]);
    } else if (existed) {
      assertThat(status.getCode()).isIn(Status.Code.ALREADY_EXISTS, Status.Code.INVALID_ARGUMENT);
    } else {
      assertThat(status.getCode()).as("create(%s)", printable(request.getName())).isEqualTo(Status.Code.INVALID_ARGUMENT);
    }
    return status;
  }

  private Status get(String name) {
    Status status = call(() -> server.admin().getSequence(GetSequenceRequest.newBuilder().setName(name).build()));
    assertThat(status.getCode()).as("get(%s)", printable(name)).isEqualTo(
        !VALID_NAME.matcher(name).matches() ? Status.Code.INVALID_ARGUMENT
            : known.containsKey(name) ? Status.Code.OK : Status.Code.NOT_FOUND);
    return status;
  }

  private Status advance(String name, Random random) {
    Sequence before = known.get(name);
    long floor;
    if (before == null || random.nextInt(4) == 0) {
      floor = pick(random, List.of(-1L, 0L, Long.MIN_VALUE, Long.MAX_VALUE, 2_147_483_647L));
    } else {
      long current = current(name);
      floor = random.nextBoolean()
          ? current - 1 - random.nextInt(1_000)                 // backwards: nothing changes
          : Math.min(current + random.nextInt(3_000), before.getMax()); // forwards, up to max
    }
    Status status = call(() -> server.admin().advanceSequence(
        AdvanceSequenceRequest.newBuilder().setName(name).setFloor(floor).build()));
    if (!VALID_NAME.matcher(name).matches()) {
      assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    } else if (before == null) {
      assertThat(status.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    } else if (floor >= before.getMax()) {
      assertThat(status.getCode()).as("advance(%s, %d)", name, floor).isEqualTo(Status.Code.FAILED_PRECONDITION);
    } else {
      assertThat(status.getCode()).as("advance(%s, %d)", name, floor).isEqualTo(Status.Code.OK);
      floors.merge(name, floor, Math::max);
    }
    return status;
  }

  /** The lowest next_unreserved of a sequence's stripes (or its max when used up). */
  private long current(String name) {
    Sequence s = server.admin().getSequence(GetSequenceRequest.newBuilder().setName(name).build());
    return s.getStripeStatesList().stream().filter(st -> st.hasNextUnreserved())
        .mapToLong(st -> st.getNextUnreserved()).min().orElse(s.getMax());
  }

  private Status list(Random random) {
    ListSequencesRequest.Builder request = ListSequencesRequest.newBuilder()
        .setPageSize(pick(random, List.of(-1, 0, 1, 3, 1_000, 1_001, Integer.MIN_VALUE, Integer.MAX_VALUE)));
    if (random.nextBoolean()) {
      request.setPageToken(randomName(random));
    }
    Status status = call(() -> server.admin().listSequences(request.build()));
    assertThat(status.getCode()).isIn(Status.Code.OK, Status.Code.INVALID_ARGUMENT);
    return status;
  }

  /** Bytes through a raw ClientCall with a byte-array marshaller, to any method of the API. */
  private Status raw(Random random) {
    List<MethodDescriptor<?, ?>> methods = List.of(IdGenGrpc.getAllocateMethod(),
        SequenceAdminGrpc.getCreateSequenceMethod(), SequenceAdminGrpc.getGetSequenceMethod(),
        SequenceAdminGrpc.getListSequencesMethod(), SequenceAdminGrpc.getAdvanceSequenceMethod());
    MethodDescriptor<?, ?> real = pick(random, methods);
    MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(real.getType()).setFullMethodName(real.getFullMethodName())
        .setRequestMarshaller(TestServer.BYTES).setResponseMarshaller(TestServer.BYTES).build();
    byte[] bytes = hostileBytes(random);
    List<byte[]> responses = new ArrayList<>();
    boolean parseable = parses(real, bytes);
    Status status = call(() -> {
      if (method.getType() == MethodDescriptor.MethodType.UNARY) {
        responses.add(ClientCalls.blockingUnaryCall(server.channel, method, CallOptions.DEFAULT, bytes));
      } else {
        Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(server.channel, method, CallOptions.DEFAULT, bytes);
        it.forEachRemaining(responses::add);
      }
    });
    if (real == IdGenGrpc.getAllocateMethod() && !responses.isEmpty()) {
      String name = parseAllocate(bytes).getSequence(); // it was a valid request, then
      List<IdRange> ranges = new ArrayList<>();
      for (byte[] r : responses) {
        try {
          ranges.add(IdRange.parseFrom(r));
        } catch (InvalidProtocolBufferException e) {
          throw new AssertionError("the server sent a malformed IdRange", e);
        }
      }
      record(name, ranges);
    }
    if (!parseable) {
      // RequestParsing: not gRPC's UNKNOWN "Application error processing RPC", but what is wrong.
      assertThat(status.getCode()).as("status of unparseable bytes %s", status)
          .isEqualTo(Status.Code.INVALID_ARGUMENT);
      String type = real.getFullMethodName().startsWith("idgen.v1.IdGen/") ? "idgen.v1.AllocateRequest"
          : "idgen.v1." + real.getFullMethodName().substring(real.getFullMethodName().indexOf('/') + 1) + "Request";
      assertThat(status.getDescription()).startsWith("the request is not a valid " + type + " message (");
    }
    return status;
  }

  /** True if {@code bytes} are a valid request message of {@code method}. */
  private static boolean parses(MethodDescriptor<?, ?> method, byte[] bytes) {
    try {
      method.parseRequest(new ByteArrayInputStream(bytes));
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static byte[] hostileBytes(Random random) {
    switch (random.nextInt(8)) {
      case 0: {
        byte[] b = new byte[random.nextInt(200)];
        random.nextBytes(b);
        return b;
      }
      case 1: // field 1 (string) holding invalid UTF-8
        return new byte[] {0x0a, 0x03, (byte) 0xff, (byte) 0xfe, (byte) 0x80};
      case 2: // a length prefix far beyond the message
        return new byte[] {0x0a, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x0f, 0x41};
      case 3: // a varint that never ends
        return new byte[] {0x10, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
            (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff};
      case 4: // an end-group tag with no group, and an invalid wire type
        return new byte[] {0x0c, 0x0f};
      case 5: { // a valid request, truncated
        byte[] ok = AllocateRequest.newBuilder().setSequence("fz-dense").setCount(5).build().toByteArray();
        return java.util.Arrays.copyOf(ok, random.nextInt(ok.length));
      }
      case 6: // the empty message: every field at its default
        return new byte[0];
      default: { // a valid request with a hostile name and count, and unknown fields after it
        byte[] ok = AllocateRequest.newBuilder().setSequence(pick(random, List.of("fz-dense", "", "x".repeat(65))))
            .setCount(pick(random, List.of(1L, 0L, -3L, 7L, Long.MAX_VALUE))).build().toByteArray();
        byte[] b = java.util.Arrays.copyOf(ok, ok.length + 3);
        b[ok.length] = (byte) 0xf8; // field 31, varint
        b[ok.length + 1] = 0x01;
        b[ok.length + 2] = 0x00;
        return b;
      }
    }
  }

  private static AllocateRequest parseAllocate(byte[] bytes) {
    try {
      return AllocateRequest.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError("ranges for an unparseable request", e);
    }
  }

  private void record(String name, List<IdRange> ranges) {
    if (ranges.isEmpty()) {
      return;
    }
    Sequence s = known.get(name);
    assertThat(s).as("ranges for sequence %s, which does not exist", printable(name)).isNotNull();
    issued.computeIfAbsent(name, n -> new IssuedIds(s.getStart(), s.getMax(), s.getStripes())).addAll(ranges);
    long floor = floors.getOrDefault(name, Long.MIN_VALUE);
    assertThat(ranges).allSatisfy(r -> assertThat(r.getFirst()).as("above the floor of %s", name).isGreaterThan(floor));
  }

  /** Runs a call; its status, asserted to be a defined one with a message unless OK. */
  private static Status call(Runnable call) {
    Status status;
    try {
      call.run();
      status = Status.OK;
    } catch (StatusRuntimeException e) {
      status = e.getStatus();
      if (status.getCode() != Status.Code.RESOURCE_EXHAUSTED) { // gRPC's size limit: no idgen details
        ErrorDetails.of(e); // asserts they are there and consistent
      }
    }
    if (!status.isOk()) {
      assertThat(status.getDescription()).as("the message of %s", status).isNotBlank();
      assertThat(DEFINED).as("defined status codes; got %s", status).contains(status.getCode());
    }
    return status;
  }

  // --- generators ----------------------------------------------------------------------------------

  private String randomName(Random random) {
    int kind = random.nextInt(20);
    return switch (kind) {
      case 0, 1, 2, 3, 4, 5, 6 -> pick(random, new ArrayList<>(known.keySet()));
      case 7 -> "unknown-" + random.nextInt(1_000);
      case 8 -> "";
      case 9 -> "a".repeat(64 + random.nextInt(2)); // the longest valid name, and one too long
      // Very long, but under idgen.limits.max-inbound-message-size (64 KiB): the name check must answer.
      // Larger requests are refused by gRPC itself (see should_refuse_a_request_above_the_size_limit...).
      case 10 -> "n".repeat(10_000 + random.nextInt(50_000));
      case 11 -> pick(random, List.of(".dot", "-dash", "_under", " lead", "trail ", "a b", "a/b", "a:b", "a*"));
      case 12 -> "ctl" + (char) random.nextInt(32) + "x";
      case 13 -> pick(random, List.of("caf\u00e9", "\u65e5\u672c", "\uff11\uff12", "\u0391lpha", "a\u200bb",
          "\u202eevil", "x\u007f"));
      case 14 -> pick(random, List.of("\ud83d\ude00", "lone\ud800", "\udfffback", "\ud800\ud800", "a\u0000b"));
      case 15 -> randomString(random, 1 + random.nextInt(80));
      default -> "k" + Long.toString(random.nextLong() & Long.MAX_VALUE, 36).substring(0, 1 + random.nextInt(8));
    };
  }

  private static String randomString(Random random, int length) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < length; i++) {
      sb.append((char) random.nextInt(random.nextBoolean() ? 128 : 0x10000));
    }
    return sb.toString();
  }

  private static long randomCount(Random random) {
    return switch (random.nextInt(12)) {
      case 0 -> 0;
      case 1 -> -1 - random.nextInt(1_000);
      case 2 -> Long.MIN_VALUE;
      case 3 -> Long.MAX_VALUE;
      case 4 -> Integer.MAX_VALUE;
      case 5 -> random.nextInt(20) == 0 ? LIMIT : LIMIT + 1;
      case 6 -> LIMIT - random.nextInt(3);
      default -> 1 + random.nextInt(random.nextBoolean() ? 10 : 5_000);
    };
  }

  private static <T> T pick(Random random, List<T> values) {
    return values.get(random.nextInt(values.size()));
  }

  private static String printable(String s) {
    String head = s.length() > 40 ? s.substring(0, 40) + "…(" + s.length() + " chars)" : s;
    StringBuilder sb = new StringBuilder("\"");
    head.chars().forEach(c -> sb.append(c < 32 || c > 126 ? String.format("\\u%04x", c) : String.valueOf((char) c)));
    return sb.append('"').toString();
  }
}
