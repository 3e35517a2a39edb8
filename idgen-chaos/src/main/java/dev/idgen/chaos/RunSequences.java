package dev.idgen.chaos;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The run's sequences: the four the clients call ({@code chaos-dense}, {@code chaos-striped},
 * {@code chaos-int32}, {@link #SMALL}), the strict one ({@link #STRICT}) in runs with strict clients, and the
 * fresh-advance episodes' ({@link FreshAdvance#PREFIX}) and the {@code redefine} kind's
 * ({@link Redefinitions#PREFIX}), each logged ({@code sequence}) for the reckoning; and the largest block sizes
 * an {@code UpdateSequence} tried on each ({@link #blocksAttempted}), which the loss bounds go by.
 *
 * <p>Threads: the main thread creates the first ones before the clients start; the fault thread adds the
 * fresh-advance episodes' and the redefine kind's while the bursts, the owner monitor and the final snapshots
 * read them: a copy-on-write list. The largest block sizes are written by the fault thread and read by every
 * thread that computes a bound: a concurrent map of immutable values.
 */
final class RunSequences {
  /** The sequence with small blocks (frequent refills). */
  static final String SMALL = "chaos-small";
  /** The strict sequence (ORDERING_STRICT, one stripe, owned in dc1). */
  static final String STRICT = "chaos-strict";
  static final String STRICT_HOME = "dc1";
  private static final long INT32_MAX = 2_147_483_647L;
  private static final long SMALL_NODE_BLOCK = 200;
  private static final long SMALL_DC_BLOCK = 1_000;
  private static final long STRICT_NODE_BLOCK = 1_000;
  private static final long STRICT_DC_BLOCK = 10_000;

  private final List<SequenceSpec> all = new CopyOnWriteArrayList<>();
  /** The largest {node block, DC block} an update tried, by sequence (absent: never changed). */
  private final Map<String, long[]> largestBlocks = new ConcurrentHashMap<>();
  private final RunLog log;

  RunSequences(RunLog log) {
    this.log = log;
  }

  /** Every sequence of the run so far, fresh-advance episodes' included. */
  List<SequenceSpec> all() {
    return all;
  }

  /** Creates the clients' sequences through {@code admin}, blocks scaled by {@code settings.callScale()}. */
  void create(ChaosRun.Settings settings, SequenceAdminGrpc.SequenceAdminBlockingStub admin) {
    // Blocks grow with the call scale, as the calls do, so that a long run's IDs per second are not bound by
    // Cassandra's compare-and-sets per second (a few dozen a second on the 2-core netns cluster).
    long scale = settings.callScale();
    all.add(new SequenceSpec("chaos-dense", 1, Long.MAX_VALUE, 1, 2_000 * scale, 20_000 * scale));
    all.add(new SequenceSpec("chaos-striped", 1_000, Long.MAX_VALUE, 4, 1_000 * scale, 10_000 * scale));
    all.add(new SequenceSpec("chaos-int32", INT32_MAX - settings.int32Space() + 1, INT32_MAX, 2,
        1_000 * scale, 10_000 * scale));
    // Small blocks, whatever the call scale: its datacenter pools are appended to several times a second and
    // its servers refill from them more often still, so that faults catch compare-and-sets of both tiers under way.
    all.add(new SequenceSpec(SMALL, 1, Long.MAX_VALUE, 1, SMALL_NODE_BLOCK, SMALL_DC_BLOCK));
    // The strict sequence: one stripe, owned in dc1 (three replicas on the netns topologies), called with 1 ID
    // or a few at a time, whatever the call scale.
    if (settings.strictClients() > 0) {
      all.add(new SequenceSpec(STRICT, 1, Long.MAX_VALUE, 1, STRICT_NODE_BLOCK, STRICT_DC_BLOCK, STRICT_HOME));
    }
    for (SequenceSpec s : all) {
      CreateSequenceRequest.Builder request = CreateSequenceRequest.newBuilder().setName(s.name())
          .setStart(s.start()).setMax(s.max()).setStripes(s.stripes()).setNodeBlockSize(s.nodeBlock())
          .setDcBlockSize(s.dcBlock());
      if (s.strict()) {
        request.setOrdering(Ordering.ORDERING_STRICT).setHomeDatacenter(s.homeDatacenter());
      }
      Sequence created = admin.createSequence(request.build());
      if (s.strict() && created.getOrdering() != Ordering.ORDERING_STRICT) {
        throw new IllegalStateException("the servers created " + s.name() + " with ordering " + created.getOrdering()
            + ", not ORDERING_STRICT: a server jar without strict sequences? (--strict-clients 0 runs without)");
      }
      log.sequence(s);
    }
  }

  /** A fresh-advance episode's sequence exists: into the reckoning. */
  void added(SequenceSpec spec) {
    all.add(spec);
    log.sequence(spec);
  }

  /**
   * The per-server sequences (stubs and raw callers) or the strict ones (strict clients); not the sequences of
   * the fresh-advance episodes and of the redefine kind, which only their own calls use.
   */
  List<SequenceSpec> of(ChaosClient.Kind kind) {
    boolean strict = kind == ChaosClient.Kind.STRICT;
    return all.stream().filter(s -> s.strict() == strict && !faultsOwn(s.name())).toList();
  }

  /** A sequence a fault kind created for its own calls (fresh-advance, redefine): no client calls it. */
  static boolean faultsOwn(String name) {
    return name.startsWith(FreshAdvance.PREFIX) || name.startsWith(Redefinitions.PREFIX);
  }

  /**
   * An update of {@code name}'s blocks to {@code nodeBlock} and {@code dcBlock} is about to be tried: from now on
   * the loss bounds take the largest sizes it has had or may have had (a failed update may have applied, and
   * servers keep blocks taken under the old sizes).
   */
  void blocksAttempted(String name, long nodeBlock, long dcBlock) {
    largestBlocks.merge(name, new long[] {nodeBlock, dcBlock},
        (a, b) -> new long[] {Math.max(a[0], b[0]), Math.max(a[1], b[1])});
  }

  /** {@code s} with the largest block sizes it has had or may have had so far in the run. */
  SequenceSpec widest(SequenceSpec s) {
    long[] tried = largestBlocks.get(s.name());
    return tried == null ? s : new SequenceSpec(s.name(), s.start(), s.max(), s.stripes(),
        Math.max(s.nodeBlock(), tried[0]), Math.max(s.dcBlock(), tried[1]), s.homeDatacenter());
  }

  /** The strict sequences (empty without strict clients). */
  List<SequenceSpec> strict() {
    return of(ChaosClient.Kind.STRICT);
  }

  /**
   * The unbounded sequences, those advance bursts aim at (the 32-bit one is left to run out by itself; the
   * redefine kind's spare is deleted and restored by that kind alone).
   */
  List<SequenceSpec> unbounded() {
    return all.stream().filter(s -> s.max() == Long.MAX_VALUE && !s.name().startsWith(Redefinitions.PREFIX))
        .toList();
  }
}
