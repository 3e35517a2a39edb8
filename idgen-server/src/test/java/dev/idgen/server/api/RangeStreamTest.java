package dev.idgen.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.core.Allocator;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.server.InMemoryRangeStore;
import dev.idgen.server.ErrorDetails;
import io.grpc.Status;
import java.time.Duration;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Allocate's ranges go out as the client's flow control allows, then exactly one final status. */
class RangeStreamTest {

  private static final List<dev.idgen.core.IdRange> THREE = List.of(
      new dev.idgen.core.IdRange(1, 10, 1), new dev.idgen.core.IdRange(11, 10, 1),
      new dev.idgen.core.IdRange(21, 10, 1));

  @Test
  void should_send_only_while_the_call_is_ready_and_resume_when_it_is_ready_again() {
    FakeCall call = new FakeCall();
    call.ready = false;

    stream(call).send(THREE, null);
    assertThat(call.sent).isEmpty();

    call.readyFor(2);
    assertThat(call.sent).extracting(IdRange::getFirst).containsExactly(1L, 11L);
    assertThat(call.completed).isFalse();

    call.readyFor(5);
    assertThat(call.sent).extracting(IdRange::getFirst).containsExactly(1L, 11L, 21L);
    assertThat(call.completed).isTrue();

    call.readyFor(5); // a late onReady sends nothing and does not complete twice
    assertThat(call.sent).hasSize(3);
    assertThat(call.closings).isEqualTo(1);
  }

  @Test
  void should_send_the_delivered_ranges_before_the_error() {
    FakeCall call = new FakeCall();

    stream(call).send(THREE.subList(0, 1), Status.OUT_OF_RANGE.asRuntimeException());

    assertThat(call.sent).hasSize(1);
    assertThat(call.error).isNotNull();
    assertThat(Status.fromThrowable(call.error).getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(call.closings).isEqualTo(1);
  }

  @Test
  void should_stop_sending_once_the_client_cancels() {
    FakeCall call = new FakeCall();
    call.ready = false;
    stream(call).send(THREE, null);

    call.onCancel.run();
    call.readyFor(5);

    assertThat(call.sent).isEmpty();
    assertThat(call.closings).isZero();
  }

  @Test
  void should_send_nothing_before_the_outcome_and_everything_once_it_comes() {
    FakeCall call = new FakeCall();
    IdGenService.RangeStream stream = stream(call);

    call.readyFor(5); // onReady while the call still waits for its IDs
    assertThat(call.sent).isEmpty();
    assertThat(call.closings).isZero();

    stream.send(THREE, null);
    assertThat(call.sent).extracting(IdRange::getFirst).containsExactly(1L, 11L, 21L);
    assertThat(call.completed).isTrue();
  }

  @Test
  void should_count_every_id_as_abandoned_when_the_client_cancels_before_the_outcome() {
    FakeCall call = new FakeCall();
    List<Long> abandoned = new ArrayList<>();
    IdGenService.RangeStream stream = new IdGenService.RangeStream("s", call, abandoned::add, null);
    stream.start();

    call.onCancel.run();
    assertThat(stream.isCancelled()).isTrue();
    stream.send(THREE, null);

    assertThat(call.sent).isEmpty();
    assertThat(call.closings).isZero();
    assertThat(abandoned).containsExactly(30L);
  }

  @Test
  void should_count_the_unsent_ids_as_abandoned_when_the_client_cancels_mid_stream() {
    FakeCall call = new FakeCall();
    call.ready = false;
    List<Long> abandoned = new ArrayList<>();
    IdGenService.RangeStream stream = new IdGenService.RangeStream("s", call, abandoned::add, null);
    stream.start();
    stream.send(THREE, null);
    call.readyFor(1);

    call.onCancel.run();

    assertThat(call.sent).hasSize(1);
    assertThat(abandoned).containsExactly(20L);
  }

  @Test
  void should_not_send_ranges_taken_before_an_advance_raised_the_floor_past_them() {
    try (Allocator allocator = Allocator.builder(new InMemoryRangeStore()).minNodeBlock(100).build()) {
      allocator.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 1_000, 100_000));
      List<dev.idgen.core.IdRange> taken = allocator.allocate("s", 10, Duration.ofSeconds(5));
      FakeCall call = new FakeCall();
      call.ready = false; // a client that reads slowly
      List<Long> abandoned = new ArrayList<>();
      IdGenService.RangeStream stream = new IdGenService.RangeStream("s", call, abandoned::add, null, allocator);
      stream.start();
      stream.send(taken, null);

      allocator.advance("s", 1_000);
      call.readyFor(5);

      assertThat(call.sent).isEmpty();
      assertThat(Status.fromThrowable(call.error).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(Status.fromThrowable(call.error).getDescription()).contains("moved the floor to 1000");
      assertThat(ErrorDetails.of(call.error).reason()).isEqualTo("RANGES_WITHDRAWN");
      assertThat(abandoned).containsExactly(10L);
      assertThat(call.closings).isEqualTo(1);
    }
  }

  @Test
  void should_not_send_ranges_that_waited_longer_than_their_valid_for() {
    FakeCall call = new FakeCall();
    call.ready = false;
    List<Long> abandoned = new ArrayList<>();
    AtomicLong now = new AtomicLong();
    IdGenService.RangeStream stream = new IdGenService.RangeStream("s", call, abandoned::add,
        com.google.protobuf.Duration.newBuilder().setNanos(1_000_000).build(), null, now::get);
    stream.start();
    stream.send(THREE, null);
    now.addAndGet(999_999);
    call.readyFor(1);
    assertThat(call.sent).hasSize(1); // read within its valid_for: sent
    now.addAndGet(1); // the client reads the rest 1 ms after the call started

    call.readyFor(5);

    assertThat(call.sent).hasSize(1);
    assertThat(Status.fromThrowable(call.error).getDescription()).contains("longer than their valid_for");
    assertThat(abandoned).containsExactly(20L);
  }

  @Test
  void should_stamp_a_strict_sequence_strict_whether_or_not_it_is_loaded_when_its_range_goes_out() throws Exception {
    try (Allocator allocator = Allocator.builder(new InMemoryRangeStore()).minNodeBlock(100)
        .unloadIdleAfter(Duration.ofSeconds(1)).build()) {
      allocator.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 1_000, 100_000)
          .withStrictOrdering(allocator.datacenter()));
      List<dev.idgen.core.IdRange> taken = allocator.allocate("s", 3, Duration.ofSeconds(5));
      for (int i = 0; i < 200 && allocator.isLoaded("s"); i++) {
        Thread.sleep(50); // the idle sweep unloads it (every second)
      }
      assertThat(allocator.isLoaded("s")).as("unloaded by the idle sweep").isFalse();
      FakeCall call = new FakeCall();
      IdGenService.RangeStream stream = new IdGenService.RangeStream("s", call, ids -> {}, null, allocator);
      stream.start();

      stream.send(taken, null);

      assertThat(call.sent).extracting(IdRange::getOrdering).containsOnly(Ordering.ORDERING_STRICT);
    }
  }

  private static IdGenService.RangeStream stream(FakeCall call) {
    IdGenService.RangeStream stream = new IdGenService.RangeStream("s", call, ids -> {}, null);
    stream.start();
    return stream;
  }

  /** A server call whose readiness the test sets, recording what the service sends. */
  private static final class FakeCall extends ServerCallStreamObserver<IdRange> {
    final List<IdRange> sent = new ArrayList<>();
    boolean ready = true;
    int budget = Integer.MAX_VALUE;
    boolean completed;
    Throwable error;
    int closings;
    Runnable onReady;
    Runnable onCancel;

    /** The transport can take {@code n} more messages now: onReady fires. */
    void readyFor(int n) {
      ready = true;
      budget = n;
      onReady.run();
    }

    @Override
    public boolean isReady() {
      return ready && budget > 0;
    }

    @Override
    public void onNext(IdRange value) {
      sent.add(value);
      budget--;
    }

    @Override
    public void onError(Throwable t) {
      error = t;
      closings++;
    }

    @Override
    public void onCompleted() {
      completed = true;
      closings++;
    }

    @Override
    public void setOnReadyHandler(Runnable handler) {
      onReady = handler;
    }

    @Override
    public void setOnCancelHandler(Runnable handler) {
      onCancel = handler;
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public void setCompression(String compression) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}
  }
}
