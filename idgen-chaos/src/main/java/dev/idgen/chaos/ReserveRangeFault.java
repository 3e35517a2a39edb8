package dev.idgen.chaos;

import dev.idgen.api.v1.ReserveRangeRequest;
import dev.idgen.api.v1.ReserveRangeResponse;
import dev.idgen.chaos.RunLog.SequenceSpec;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * {@code reserve-range}: 2–4 concurrent {@code ReserveRange} calls on random servers, on a sequence of one stripe,
 * each of about a DC block (so that they race with the datacenters' refills on the global cursor), and a retry
 * of the first one's request id on another server once it returned (which must get the same range); run on the
 * advance pool beside the fault thread, so that they meet the faults that follow. Each call's outcome is a
 * {@code reservation} line of {@code run.txt} ({@link ReservationCheck#LINE}): the checker proves that no
 * reserved ID was handed out by {@code Allocate}, that a retry got its request's range, and takes the reserved
 * IDs out of the loss reckoning (a failed call's count into the lost bound: its range may be a gap). Loses
 * nothing counted itself (lost bound 0).
 *
 * <p>Threads: drawn on the fault thread; its calls on the advance pool ({@link AdvanceBursts#alongside}).
 */
final class ReserveRangeFault extends BasicFault {
  ReserveRangeFault() {
    super("reserve-range", 1, Set.of());
  }

  /** One call as drawn from the seed. */
  private record Call(ServerNode target, long count, String requestId, ServerNode retryOn) {}

  @Override
  public void inject(FaultContext run, Occasion occasion) {
    Random random = run.random();
    List<SequenceSpec> candidates = run.sequences().all().stream()
        .filter(s -> s.stripes() == 1 && s.max() == Long.MAX_VALUE && !RunSequences.faultsOwn(s.name()))
        .toList();
    SequenceSpec seq = candidates.get(random.nextInt(candidates.size()));
    Fleet fleet = run.fleet();
    int n = 2 + random.nextInt(3);
    List<Call> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ServerNode target = fleet.get(random.nextInt(fleet.size()));
      long count = 1 + random.nextInt((int) Math.min(seq.dcBlock(), 1_000_000));
      ServerNode retryOn = i == 0 ? fleet.get(random.nextInt(fleet.size())) : null;
      calls.add(new Call(target, count, "chaos-" + run.settings().seed() + "-" + run.faultNo() + "-" + i, retryOn));
    }
    long at = run.clock().millis();
    String detail = seq.name() + " calls=" + n + " counts=" + calls.stream().map(c -> Long.toString(c.count())).toList()
        .toString().replace(" ", "");
    run.log().fault(at, kind(), 0, detail);
    run.say("reserve-range " + detail);
    String faultSeq = Integer.toString(run.faultNo());
    run.bursts().alongside(() -> {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (Call c : calls) {
        done.add(run.bursts().pool().submit(() -> {
          go.await();
          reserve(run, seq.name(), c.count(), c.requestId(), c.target());
          if (c.retryOn() != null) {
            reserve(run, seq.name(), c.count(), c.requestId(), c.retryOn()); // the same range, or a new one
          }
          return null;
        }));
      }
      go.countDown();
      try {
        for (Future<?> f : done) {
          f.get(120, TimeUnit.SECONDS);
        }
      } finally {
        run.log().window(faultSeq, kind(), at, run.clock().millis(), detail);
      }
      return null;
    });
  }

  /** One call, logged as a {@code reservation} line whatever its outcome. */
  private static void reserve(FaultContext run, String name, long count, String requestId, ServerNode target) {
    long started = run.clock().nanos();
    try {
      ReserveRangeResponse r = Fleet.admin(target, 30).reserveRange(ReserveRangeRequest.newBuilder()
          .setName(name).setCount(count).setRequestId(requestId).build());
      ReservationCheck.logMade(run.log(), name, r.getReservation().getFirst(), r.getReservation().getLast(),
          requestId, r.getReplayed(), target.name(), started, run.clock().nanos());
    } catch (StatusRuntimeException e) {
      String code = RecordingInterceptor.outcome(e.getStatus(), e.getTrailers());
      ReservationCheck.logFailed(run.log(), name, count, requestId, code, target.name(), started);
      run.say("reserve-range on " + target.name() + " failed: " + code);
    }
  }
}
