package dev.idgen.chaos;

import com.google.protobuf.FieldMask;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.DeleteSequenceRequest;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc.SequenceAdminBlockingStub;
import dev.idgen.api.v1.UndeleteSequenceRequest;
import dev.idgen.api.v1.UpdateSequenceRequest;
import dev.idgen.chaos.RunLog.SequenceSpec;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * What the {@code redefine} kind ({@link RedefineFault}) keeps from one injection to the next, and its calls:
 * its two sequences ({@link #BOUNDED}, drained to exhaustion and raised; {@link #SPARE}, deleted and restored),
 * created at its first injection and called by nobody else; its {@code Allocate} calls, recorded into a record
 * file of their own ({@link FreshCalls}: {@code client-N.bin}, a {@code client N redefine} line), so that the
 * checker holds their ranges to uniqueness and bounds as any other's; and every admin call and every call of
 * its own with its outcome, as a {@value #LINE} line of {@code run.txt} ({@link DefinitionCheck} reads them):
 * <pre>
 *   redefine OP NAME ARG STARTED_NANOS RETURNED_NANOS OUTCOME SERVER
 *       OP update (ARG: the fields it sets, max=V or node_block_size=V,dc_block_size=V), delete, undelete (ARG -),
 *       or call (an Allocate of the kind's own; ARG its phase: raised, before, deleted, undeleted; the drain's
 *       calls are summed in one {@code note redefine-drain} line instead);
 *       OUTCOME OK, or CODE[:REASON] (NOT_FOUND:SEQUENCE_DELETED)
 * </pre>
 * The two cycles ({@link #raise}, {@link #deleteAndRestore}) run on the advance pool beside the fault thread, at
 * most one of each at a time ({@link #claim}): a delete that overlapped a restore of the one before would
 * leave the checker no window in which the spare was certainly deleted.
 *
 * <p>Threads: made, and its sequences created, by the fault thread, which alone writes {@link #boundedMax};
 * the cycles on the advance pool; {@link #close} by the fault thread at the end, once the pool's work is
 * over. What they share is thread-safe: the recorded calls, the run's log, the busy flags (atomic).
 */
final class Redefinitions implements AutoCloseable {
  /** The first characters of the kind's sequences' names: no client, burst or reservation calls them. */
  static final String PREFIX = "chaos-redefine-";
  /** Small and bounded: drained to exhaustion, then raised (two stripes: each must serve again). */
  static final SequenceSpec BOUNDED = new SequenceSpec(PREFIX + "bounded", 1, 2_000, 2, 50, 200);
  /** Unbounded, one stripe: deleted and restored. */
  static final SequenceSpec SPARE = new SequenceSpec(PREFIX + "spare", 1, Long.MAX_VALUE, 1, 100, 1_000);
  /** The first token of the lines. */
  static final String LINE = "redefine";
  /** A deletion confirmed by every live server: its OK, or a repeated delete's answer. */
  static final Predicate<String> DELETED = o -> o.equals("OK") || o.equals("NOT_FOUND:SEQUENCE_DELETED");
  /** A restoration confirmed by every live server: its OK, or a repeated undelete's answer. */
  static final Predicate<String> RESTORED = o -> o.equals("OK") || o.equals("FAILED_PRECONDITION:SEQUENCE_NOT_DELETED");
  private static final long ADMIN_SECONDS = 20;
  private static final long CALL_SECONDS = 3;

  /** An admin call whose outcome is logged. */
  interface AdminCall {
    void call(SequenceAdminBlockingStub admin);
  }

  private final RunLog log;
  private final RunClock clock;
  private final List<ServerNode> servers;
  private final FreshCalls calls;
  private final AtomicBoolean raising = new AtomicBoolean();
  private final AtomicBoolean deleting = new AtomicBoolean();
  /** The fault thread's: which of the two sequences exist, and the highest max a raise of BOUNDED tried. */
  private boolean boundedCreated;
  private boolean spareCreated;
  private long boundedMax = BOUNDED.max();

  /** Recorded calls to every slot of {@code servers} into {@code dir/client-<clientId>.bin}, made on {@code pool}. */
  Redefinitions(int clientId, Path dir, RunLog log, RunClock clock, List<ServerNode> servers, ExecutorService pool) {
    this.log = log;
    this.clock = clock;
    this.servers = List.copyOf(servers);
    this.calls = new FreshCalls(dir.resolve("client-" + clientId + ".bin"), clock, this.servers, pool);
    log.line("client", clientId, "redefine");
  }

  /**
   * Creates the kind's sequences that do not exist yet, on {@code on} (the fault thread's); returns whether both
   * exist. A creation whose outcome was lost and that is tried again finds the name taken: created too.
   */
  boolean ensureSequences(ServerNode on, RunSequences sequences) {
    boundedCreated = boundedCreated || create(BOUNDED, on, sequences);
    spareCreated = spareCreated || create(SPARE, on, sequences);
    return boundedCreated && spareCreated;
  }

  private boolean create(SequenceSpec s, ServerNode on, RunSequences sequences) {
    try {
      Fleet.admin(on, ADMIN_SECONDS).createSequence(CreateSequenceRequest.newBuilder().setName(s.name())
          .setStart(s.start()).setMax(s.max()).setStripes(s.stripes()).setNodeBlockSize(s.nodeBlock())
          .setDcBlockSize(s.dcBlock()).build());
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != io.grpc.Status.Code.ALREADY_EXISTS) {
        log.line("note", "redefine-not-created", s.name(), RecordingInterceptor.outcome(e.getStatus(), e.getTrailers()));
        return false;
      }
    }
    sequences.added(s); // into the reckoning, and out of the clients' lists (its prefix)
    return true;
  }

  /** The max a raise by {@code by} sets, taken now (the fault thread's): raises only ever go up. */
  long nextBoundedMax(long by) {
    boundedMax += by;
    return boundedMax;
  }

  /** Claims the raise cycle ({@code raise}) or the delete cycle; false if the last one is still under way. */
  boolean claim(boolean raise) {
    return (raise ? raising : deleting).compareAndSet(false, true);
  }

  /**
   * The raise cycle (claimed): drains {@link #BOUNDED} until every live server says it is exhausted (at most
   * 400 calls, 30 s), raises its max to {@code newMax} on {@code on} (again, without etag, if a live server did
   * not confirm: that completes it), then calls every live server, which must serve again without a restart.
   */
  String raise(long newMax, ServerNode on, Random random) throws InterruptedException {
    try {
      String drained = drain(random);
      String outcome = update(BOUNDED.name(), "max=" + newMax, on, updateRequest(BOUNDED.name(), newMax, 0, 0, ""));
      long served = callEveryLive(BOUNDED.name(), "raised", random);
      return "raise " + BOUNDED.name() + " to " + newMax + ": " + outcome + ", " + drained + ", then " + served
          + " live servers served";
    } finally {
      raising.set(false);
    }
  }

  /**
   * An UpdateSequence of {@code name} that sets {@code max}, {@code nodeBlock} and {@code dcBlock} (those not 0,
   * named in the mask), only if its etag is still {@code etag} (empty: whatever it is).
   */
  static UpdateSequenceRequest updateRequest(String name, long max, long nodeBlock, long dcBlock, String etag) {
    Sequence.Builder s = Sequence.newBuilder().setName(name).setEtag(etag);
    FieldMask.Builder mask = FieldMask.newBuilder();
    if (max != 0) {
      s.setMax(max);
      mask.addPaths("max");
    }
    if (nodeBlock != 0) {
      s.setNodeBlockSize(nodeBlock);
      mask.addPaths("node_block_size");
    }
    if (dcBlock != 0) {
      s.setDcBlockSize(dcBlock);
      mask.addPaths("dc_block_size");
    }
    return UpdateSequenceRequest.newBuilder().setSequence(s).setUpdateMask(mask).build();
  }

  /**
   * {@code request} on {@code on}, logged as an update of {@code name} setting {@code fields}; once more, without
   * its etag, if a live server did not confirm it (that completes it); the last outcome.
   */
  String update(String name, String fields, ServerNode on, UpdateSequenceRequest request) {
    String outcome = admin("update", name, fields, on, ADMIN_SECONDS, a -> a.updateSequence(request));
    if (!outcome.equals("UNAVAILABLE:CHANGE_NOT_CONFIRMED")) {
      return outcome;
    }
    UpdateSequenceRequest again = request.toBuilder().setSequence(request.getSequence().toBuilder().clearEtag())
        .build();
    return admin("update", name, fields, on, ADMIN_SECONDS, a -> a.updateSequence(again));
  }

  private String drain(Random random) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    int made = 0;
    int ok = 0;
    int exhaustedInARow = 0;
    while (made < 400 && System.nanoTime() < deadline) {
      List<Integer> live = liveSlots();
      if (exhaustedInARow >= 2 * Math.max(1, live.size())) {
        break; // every live server, most likely, twice
      }
      if (live.isEmpty()) {
        Thread.sleep(200);
        continue;
      }
      FreshCalls.Call c = calls.call(live.get(random.nextInt(live.size())), BOUNDED.name(), 1 + random.nextInt(100),
          CALL_SECONDS);
      made++;
      ok += c.ok() ? 1 : 0;
      exhaustedInARow = c.outcome().startsWith("OUT_OF_RANGE") ? exhaustedInARow + 1 : 0;
      if (!c.ok() && exhaustedInARow == 0) {
        Thread.sleep(100); // a fault elsewhere: not too fast
      }
    }
    boolean exhausted = exhaustedInARow > 0;
    log.line("note", "redefine-drain", BOUNDED.name(), "calls=" + made, "ok=" + ok, "exhausted=" + exhausted);
    return "drained in " + made + " calls" + (exhausted ? " to exhaustion" : " (not exhausted)");
  }

  /**
   * The delete cycle (claimed): IDs taken from {@link #SPARE} on every live server, then it is deleted (up to 3
   * tries, on {@code deleteOn} and the next servers, until one is confirmed); for {@code holdMillis} every live
   * server is called about twice a second, each call to be refused {@code NOT_FOUND:SEQUENCE_DELETED}; then it
   * is restored (up to 5 tries from {@code undeleteOn}) and every live server called again, to serve above what
   * it handed out before. Within about 2 minutes however the calls go (each call within 3 s, the admin
   * calls within 20 s, the deletion's by 35 s, the restoration's by 85 s).
   */
  String deleteAndRestore(long holdMillis, ServerNode deleteOn, ServerNode undeleteOn, Random random)
      throws InterruptedException {
    long start = System.nanoTime();
    try {
      callEveryLive(SPARE.name(), "before", random);
      String deleted = retry("delete", deleteOn, 3, start + TimeUnit.SECONDS.toNanos(35), DELETED,
          a -> a.deleteSequence(DeleteSequenceRequest.newBuilder().setName(SPARE.name()).build()));
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(holdMillis);
      int made = 0;
      int refused = 0;
      while (System.nanoTime() < until) {
        for (int slot : liveSlots()) {
          FreshCalls.Call c = call(SPARE.name(), "deleted", slot, 1 + random.nextInt(10));
          made++;
          refused += c.outcome().equals("NOT_FOUND:SEQUENCE_DELETED") ? 1 : 0;
        }
        Thread.sleep(500);
      }
      String restored = retry("undelete", undeleteOn, 5, start + TimeUnit.SECONDS.toNanos(85), RESTORED,
          a -> a.undeleteSequence(UndeleteSequenceRequest.newBuilder().setName(SPARE.name()).build()));
      long served = callEveryLive(SPARE.name(), "undeleted", random);
      return "delete " + SPARE.name() + ": " + deleted + ", " + refused + " of " + made + " calls refused"
          + " SEQUENCE_DELETED while deleted; undelete: " + restored + ", then " + served + " live servers served";
    } finally {
      deleting.set(false);
    }
  }

  /** Up to {@code tries} calls of {@code op} on the spare, from {@code first} on, until {@code done} or {@code by}. */
  private String retry(String op, ServerNode first, int tries, long byNanos, Predicate<String> done, AdminCall call)
      throws InterruptedException {
    String outcome = "not-tried";
    int from = servers.indexOf(first);
    for (int i = 0; i < tries && !done.test(outcome); i++) {
      long left = TimeUnit.NANOSECONDS.toSeconds(byNanos - System.nanoTime());
      if (left < 1) {
        break;
      }
      if (i > 0) {
        Thread.sleep(500);
      }
      outcome = admin(op, SPARE.name(), "-", servers.get((from + i) % servers.size()), Math.min(ADMIN_SECONDS, left),
          call);
    }
    return outcome;
  }

  /** One admin call on {@code on} within {@code seconds}, logged whatever its outcome; its outcome. */
  String admin(String op, String name, String arg, ServerNode on, long seconds, AdminCall call) {
    long started = clock.nanos();
    String outcome = "OK";
    try {
      call.call(Fleet.admin(on, seconds));
    } catch (StatusRuntimeException e) {
      outcome = RecordingInterceptor.outcome(e.getStatus(), e.getTrailers());
    }
    logged(log, op, name, arg, started, clock.nanos(), outcome, on.name());
    return outcome;
  }

  /** A {@value #LINE} line (see the class comment). */
  static void logged(RunLog log, String op, String name, String arg, long startedNanos, long returnedNanos,
      String outcome, String server) {
    log.line(LINE, op, name, arg, startedNanos, returnedNanos, outcome, server);
  }

  /** One call of {@code count} IDs on every live server, one after the other; how many served. */
  private long callEveryLive(String name, String phase, Random random) {
    long served = 0;
    for (int slot : liveSlots()) {
      served += call(name, phase, slot, 1 + random.nextInt(20)).ok() ? 1 : 0;
    }
    return served;
  }

  private FreshCalls.Call call(String name, String phase, int slot, long count) {
    FreshCalls.Call c = calls.call(slot, name, count, CALL_SECONDS);
    logged(log, "call", name, phase, c.startNanos(), c.endNanos(), c.outcome(), servers.get(slot).name());
    return c;
  }

  private List<Integer> liveSlots() {
    List<Integer> live = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      if (servers.get(i).alive()) {
        live.add(i);
      }
    }
    return live;
  }

  /** Lets the calls in flight finish and be recorded, then closes the record (the end, after the pool's work). */
  @Override
  public void close() throws InterruptedException {
    calls.close();
  }
}
