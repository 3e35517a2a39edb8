package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the clients recorded of one sequence, gathered by {@link RecordReader} for the checks: the ranges they
 * received, the runs their stubs handed out, and a strict sequence's whole calls. Mutable while the records
 * are read, then only read; single-threaded, as the checker is.
 */
final class SequenceRecords {
  /** The sequence, with the highest max any update attempted ({@link DefinitionCheck#records}). */
  final SequenceSpec spec;
  /** The max its final cursors were read under: a stripe used up at the end ends there. */
  final long spaceMax;
  final List<ReceivedRange> ranges = new ArrayList<>();
  final List<ServedRun> served = new ArrayList<>();
  long servedIds;
  /** Strict clients' calls that handed out IDs (held to the order if the sequence is strict). */
  final List<StrictOrder.Call> calls = new ArrayList<>();
  /** A strict sequence's stub batches, as calls: asked for, handed out (held to the order with the calls). */
  final List<StrictOrder.Call> stubBatches = new ArrayList<>();
  /** The ends of their successful calls. */
  final List<Long> okEnds = new ArrayList<>();
  long wholeCalls;
  long okCalls;
  long unmarked;
  final Map<String, Long> failures = new TreeMap<>();

  SequenceRecords(SequenceSpec spec) {
    this(spec, spec.max());
  }

  SequenceRecords(SequenceSpec spec, long spaceMax) {
    this.spec = spec;
    this.spaceMax = spaceMax;
  }
}
