package dev.idgen.chaos;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The {@code Allocate} calls of a fault kind that calls sequences of its own (the fresh-advance episodes,
 * {@link FreshAdvance}; the redefine kind, {@link Redefinitions}): channels of their own to every server slot,
 * with a {@link RecordingInterceptor}, into a record file of their own ({@code client-N.bin}), so that the
 * checker holds every one of their ranges to uniqueness, bounds and the floors.
 *
 * <p>Threads: calls are made at once from the advance pool (an episode's) and the prober thread; the channels
 * and the recorder are thread-safe, and the lists of channels are fixed at construction. {@link #close} is
 * called once, after the prober stopped.
 */
final class FreshCalls {
  /**
   * One call's times (run clock; {@code firstNanos} the first range, or the end if none) and outcome ({@code OK},
   * or the status code and idgen's reason: {@code NOT_FOUND:SEQUENCE_DELETED}).
   */
  record Call(int slot, long startNanos, long firstNanos, long endNanos, String outcome) {
    boolean ok() {
      return outcome.equals("OK");
    }
  }

  private final RunClock clock;
  private final List<ServerNode> servers;
  private final ExecutorService pool;
  private final Recorder recorder;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<Channel> recorded = new ArrayList<>();

  /** Channels to every slot of {@code servers}, recorded into {@code file}; calls on every server run on {@code pool}. */
  FreshCalls(Path file, RunClock clock, List<ServerNode> servers, ExecutorService pool) {
    this.clock = clock;
    this.servers = servers;
    this.pool = pool;
    this.recorder = new Recorder(file, clock);
    for (int slot = 0; slot < servers.size(); slot++) {
      ManagedChannel ch = Grpc.newChannelBuilder(servers.get(slot).target(), InsecureChannelCredentials.create())
          .build();
      channels.add(ch);
      recorded.add(ClientInterceptors.intercept(ch, new RecordingInterceptor(recorder, slot)));
    }
  }

  /** One call on every live server at once (1–5 IDs each), each within 10 s. */
  List<Call> callEveryServer(String sequence) throws InterruptedException {
    List<Future<Call>> calls = new ArrayList<>();
    for (int slot = 0; slot < servers.size(); slot++) {
      if (servers.get(slot).alive()) {
        int s = slot;
        long count = 1 + (sequence.hashCode() & 0x7fffffff) % 5;
        calls.add(pool.submit(() -> call(s, sequence, count, 10)));
      }
    }
    List<Call> done = new ArrayList<>();
    for (Future<Call> f : calls) {
      Call c = FreshAdvance.result(f, null);
      if (c != null) {
        done.add(c);
      }
    }
    return done;
  }

  /** One Allocate of {@code count} IDs on server slot {@code slot}, recorded; its times and outcome. */
  Call call(int slot, String sequence, long count, long seconds) {
    long start = clock.nanos();
    long first = Long.MIN_VALUE;
    String outcome = "OK";
    try {
      Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(recorded.get(slot))
          .withDeadlineAfter(seconds, TimeUnit.SECONDS)
          .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
      while (ranges.hasNext()) {
        ranges.next(); // recorded by the interceptor
        if (first == Long.MIN_VALUE) {
          first = clock.nanos();
        }
      }
    } catch (StatusRuntimeException e) {
      outcome = RecordingInterceptor.outcome(e.getStatus(), e.getTrailers());
    }
    long end = clock.nanos();
    return new Call(slot, start, first == Long.MIN_VALUE ? end : first, end, outcome);
  }


  /** Lets the calls in flight finish and be recorded (at most 15 s per channel), then closes the record. */
  void close() throws InterruptedException {
    channels.forEach(ManagedChannel::shutdown);
    for (ManagedChannel ch : channels) {
      ch.awaitTermination(15, TimeUnit.SECONDS);
    }
    recorder.awaitCallsClosed(5_000);
    channels.forEach(ManagedChannel::shutdownNow);
    recorder.close();
  }
}
