package dev.idgen.chaos;

import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.chaos.RunLog.SequenceSpec;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code redefine}: a sequence's definition changed under load ({@code UpdateSequence}, {@code DeleteSequence},
 * {@code UndeleteSequence}). Each injection does one or more of three things (each drawn one time in two, at
 * least one):
 * <ul>
 *   <li><b>blocks</b>: {@code node_block_size} and {@code dc_block_size} of a sequence the clients call, each a
 *       quarter to four times its size at creation (the DC block at least the node block), with the etag read
 *       just before; on the fault thread, so that every fault after it is bounded with the largest sizes
 *       ({@link RunSequences#blocksAttempted}, recorded before the call: a failed update may have applied);
 *   <li><b>raise</b>: {@link Redefinitions#BOUNDED} drained until its servers say it is exhausted, its max raised
 *       by 500–2,000, and every live server called again: an exhausted sequence must serve again, without a
 *       restart ({@link Redefinitions#raise});
 *   <li><b>delete</b>: {@link Redefinitions#SPARE} called, deleted, held deleted 3–8 s while every live server is
 *       called (each must refuse {@code NOT_FOUND:SEQUENCE_DELETED}), restored, called again (it must serve
 *       above everything it handed out) ({@link Redefinitions#deleteAndRestore}).
 * </ul>
 * The raise and the delete run on the advance pool beside the fault thread, so that the faults that follow
 * meet them (a delete held while a server is killed, cut off, or its Cassandra paused); a raise or a delete
 * whose last one is still under way is skipped (said in the fault's line). Every admin call and every call of
 * the kind's own is a {@code redefine} line of {@code run.txt}; the checker ({@link DefinitionCheck}) judges
 * the bounds against the highest max attempted, and {@code deleted_served}. Its lost bound: each change's
 * give-backs ({@link LossBounds#redefine}).
 *
 * <p>Threads: drawn on the fault thread, which also makes the block change; the raise and the delete on the
 * advance pool ({@link AdvanceBursts#alongside}).
 */
final class RedefineFault extends BasicFault {
  /** The longest the pool's part waits for a raise or a delete cycle (each ends within about 2 minutes). */
  private static final long CYCLE_WAIT_SECONDS = 150;

  RedefineFault() {
    super("redefine", 2, Set.of());
  }

  /** One injection as drawn from the seed (every field drawn, whatever is done). */
  private record Plan(boolean blocks, boolean raise, boolean delete, SequenceSpec target, long nodeBlock,
      long dcBlock, ServerNode blocksOn, long raiseBy, ServerNode raiseOn, long holdMillis, ServerNode deleteOn,
      ServerNode undeleteOn, ServerNode creator, long cycleSeed) {}

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Plan p = draw(run);
    Redefinitions r = run.redefinitions();
    boolean ready = (p.raise() || p.delete()) && r.ensureSequences(p.creator(), run.sequences());
    boolean raising = p.raise() && ready && r.claim(true);
    boolean deleting = p.delete() && ready && r.claim(false);
    long newMax = raising ? r.nextBoundedMax(p.raiseBy()) : 0;
    if (p.blocks()) {
      run.sequences().blocksAttempted(p.target().name(), p.nodeBlock(), p.dcBlock()); // before its bound
    }
    long bound = (p.blocks() ? run.bounds().redefine(p.target(), 1) : 0)
        + (raising ? run.bounds().redefine(Redefinitions.BOUNDED, 1) : 0)
        + (deleting ? run.bounds().redefine(Redefinitions.SPARE, 2) : 0); // its delete and its undelete
    String skipped = ready ? "skipped (the last still under way)" : "skipped (its sequences not created)";
    String detail = ((p.blocks() ? " blocks " + p.target().name() + " node_block_size=" + p.nodeBlock()
        + " dc_block_size=" + p.dcBlock() : "")
        + (p.raise() ? " raise " + (raising ? Redefinitions.BOUNDED.name() + " max=" + newMax : skipped) : "")
        + (p.delete() ? " delete " + (deleting ? Redefinitions.SPARE.name() + " hold-ms=" + p.holdMillis() : skipped)
            : "")).trim();
    long at = run.clock().millis();
    String faultSeq = run.faultLabel();
    run.log().fault(at, kind(), bound, detail);
    run.say("redefine " + detail);
    String blocked = "";
    try {
      if (p.blocks()) {
        String etag = etag(p.target().name(), p.blocksOn());
        blocked = r.update(p.target().name(), "node_block_size=" + p.nodeBlock() + ",dc_block_size=" + p.dcBlock(),
            p.blocksOn(), Redefinitions.updateRequest(p.target().name(), 0, p.nodeBlock(), p.dcBlock(), etag));
        run.say("redefine: blocks of " + p.target().name() + ": " + blocked);
      }
    } finally {
      if (!raising && !deleting) {
        run.log().window(faultSeq, kind(), at, run.clock().millis(), detail);
      }
    }
    if (!raising && !deleting) {
      return;
    }
    ExecutorService pool = run.bursts().pool();
    run.bursts().alongside(() -> {
      Random own = new Random(p.cycleSeed());
      Random forRaise = new Random(own.nextLong());
      Random forDelete = new Random(own.nextLong());
      List<Future<String>> cycles = new ArrayList<>(2);
      if (raising) {
        cycles.add(pool.submit(() -> r.raise(newMax, p.raiseOn(), forRaise)));
      }
      if (deleting) {
        cycles.add(pool.submit(() -> r.deleteAndRestore(p.holdMillis(), p.deleteOn(), p.undeleteOn(), forDelete)));
      }
      try {
        for (Future<String> f : cycles) {
          run.say("redefine: " + outcome(f));
        }
      } finally {
        run.log().window(faultSeq, kind(), at, run.clock().millis(), detail);
      }
      return null;
    });
  }

  /** Everything an injection may use, drawn from the run's random in a fixed order. */
  private static Plan draw(FaultContext run) {
    Random random = run.random();
    Fleet fleet = run.fleet();
    boolean blocks = random.nextBoolean();
    boolean raise = random.nextBoolean();
    boolean delete = random.nextBoolean();
    int only = random.nextInt(3); // when none of the three was drawn
    if (!blocks && !raise && !delete) {
      blocks = only == 0;
      raise = only == 1;
      delete = only == 2;
    }
    List<SequenceSpec> called = run.sequences().of(ChaosClient.Kind.RAW);
    SequenceSpec target = called.get(random.nextInt(called.size()));
    long nodeBlock = scaled(target.nodeBlock(), random.nextInt(5) - 2);
    long dcBlock = Math.max(nodeBlock, scaled(target.dcBlock(), random.nextInt(5) - 2));
    ServerNode blocksOn = fleet.get(random.nextInt(fleet.size()));
    long raiseBy = 500 + random.nextInt(1_501);
    ServerNode raiseOn = fleet.get(random.nextInt(fleet.size()));
    long holdMillis = 3_000 + random.nextInt(5_001);
    ServerNode deleteOn = fleet.get(random.nextInt(fleet.size()));
    ServerNode undeleteOn = fleet.get(random.nextInt(fleet.size()));
    ServerNode creator = fleet.get(random.nextInt(fleet.size()));
    return new Plan(blocks, raise, delete, target, nodeBlock, dcBlock, blocksOn, raiseBy, raiseOn, holdMillis,
        deleteOn, undeleteOn, creator, random.nextLong());
  }

  /** {@code size} times 2^{@code shift} (-2 to 2), at least 1. */
  private static long scaled(long size, int shift) {
    return Math.max(1, shift >= 0 ? size << shift : size >> -shift);
  }

  /** {@code name}'s etag as {@code on} reads it now; empty (an update without one) if it cannot say. */
  private static String etag(String name, ServerNode on) {
    try {
      return Fleet.admin(on, 10).getSequence(GetSequenceRequest.newBuilder().setName(name).build()).getEtag();
    } catch (StatusRuntimeException e) {
      return "";
    }
  }

  /** A cycle's outcome, once it ended (at most {@value #CYCLE_WAIT_SECONDS} s: cancelled then). */
  private static String outcome(Future<String> f) throws InterruptedException {
    try {
      return f.get(CYCLE_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return "failed: " + e.getCause();
    } catch (TimeoutException e) {
      f.cancel(true);
      return "no end within " + CYCLE_WAIT_SECONDS + " s";
    }
  }
}
