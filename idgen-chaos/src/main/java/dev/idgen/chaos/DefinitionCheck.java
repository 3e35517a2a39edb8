package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.idsAtOrBelow;
import static dev.idgen.chaos.IdMath.lastId;
import static dev.idgen.chaos.IdMath.secs;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Sequences whose definition changed during the run (the {@code redefine} kind, {@link RedefineFault}), from the
 * {@value Redefinitions#LINE} lines of {@code run.txt} (see {@link Redefinitions}) and the {@code final-definition}
 * lines of the end ({@code final-definition NAME MAX NODE_BLOCK DC_BLOCK live|deleted}; {@link RunLog#read}
 * ignores both):
 * <ul>
 *   <li>the bounds: a sequence's IDs are held to the highest max any update <em>attempted</em> (a failed update,
 *       or one whose outcome is unknown, may have applied) instead of its max at creation ({@link #records}),
 *       and, one range at a time, to the highest max attempted by an update that started before the range was
 *       read: IDs above it were handed out before any raise allowed them, and count in {@code out_of_bounds};
 *       the final cursors of a used-up stripe are read under the max the run ended with;
 *   <li>{@code deleted_served} (must be 0): IDs of ranges received on calls that started after a
 *       {@code DeleteSequence} of their sequence was confirmed (it returned OK, or a repeated delete answered
 *       {@code NOT_FOUND:SEQUENCE_DELETED}, which it does only once every live server applied it) and read before
 *       the next {@code UndeleteSequence} started: a deleted sequence served;
 *   <li>for the summary: the changes and their outcomes, and the kind's own calls while deleted, refused
 *       {@code NOT_FOUND:SEQUENCE_DELETED} or otherwise (a dead or cut-off server).
 * </ul>
 * Single-threaded, as the checker is.
 */
final class DefinitionCheck {
  /** The first token of the lines of the end. */
  static final String FINAL = "final-definition";

  /** One line: an admin call ({@code update}, {@code delete}, {@code undelete}) or a call of the kind's own. */
  record Change(String op, String name, String arg, long startedNanos, long returnedNanos, String outcome,
      String server) {
    /** The max an update set, or Long.MIN_VALUE if it did not set one. */
    long max() {
      for (String field : arg.split(",")) {
        if (field.startsWith("max=")) {
          return Long.parseLong(field.substring("max=".length()));
        }
      }
      return Long.MIN_VALUE;
    }
  }

  /**
   * What the lines say: {@code changes} admin calls (updates, deletes, undeletes), {@code confirmedDeletes} of them,
   * {@code whileDeleted} calls of the kind's own made and ended inside a confirmed deletion and {@code refused}
   * of them {@code NOT_FOUND:SEQUENCE_DELETED}, {@code deletedServed} IDs served inside one (a violation),
   * {@code aboveMax} IDs above the max then attempted (in {@code out_of_bounds}).
   */
  record Totals(long changes, long updates, long updatesOk, long deletes, long confirmedDeletes, long undeletes,
      long whileDeleted, long refused, long deletedServed, long aboveMax) {
    static final Totals NONE = new Totals(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  }

  private final List<Change> lines;
  /** The max each sequence ended with, as the final snapshot read it. */
  private final Map<String, Long> finalMax;
  private final Map<String, Long> createdMax = new HashMap<>();
  private long deletedServed;
  private long aboveMax;

  private DefinitionCheck(List<Change> lines, Map<String, Long> finalMax) {
    this.lines = lines;
    this.finalMax = finalMax;
  }

  /** Reads the lines of the run in {@code dir}. */
  static DefinitionCheck read(Path dir) throws IOException {
    List<Change> lines = new ArrayList<>();
    Map<String, Long> finalMax = new HashMap<>();
    for (String line : Files.readAllLines(dir.resolve(RunLog.FILE), StandardCharsets.UTF_8)) {
      String[] t = line.split(" ");
      if (t[0].equals(Redefinitions.LINE) && t.length >= 8) {
        lines.add(new Change(t[1], t[2], t[3], Long.parseLong(t[4]), Long.parseLong(t[5]), t[6], t[7]));
      } else if (t[0].equals(FINAL) && t.length >= 3) {
        finalMax.put(t[1], Long.parseLong(t[2]));
      }
    }
    return new DefinitionCheck(List.copyOf(lines), finalMax);
  }

  /**
   * The records of {@code spec}'s sequence, to be filled by the reader: bounded by the highest max any update
   * attempted (at least its max at creation), their final cursors read under the max the run ended with (at
   * least any max an update is known to have set).
   */
  SequenceRecords records(SequenceSpec spec) {
    createdMax.put(spec.name(), spec.max());
    long tried = spec.max();
    long applied = spec.max();
    for (Change c : of("update", spec.name())) {
      tried = Math.max(tried, c.max());
      if (c.outcome().equals("OK") || c.outcome().equals("UNAVAILABLE:CHANGE_NOT_CONFIRMED")) {
        applied = Math.max(applied, c.max());
      }
    }
    SequenceSpec bounded = new SequenceSpec(spec.name(), spec.start(), tried, spec.stripes(), spec.nodeBlock(),
        spec.dcBlock(), spec.homeDatacenter());
    Long ended = finalMax.get(spec.name());
    return new SequenceRecords(bounded, ended == null ? tried : Math.min(tried, Math.max(ended, applied)));
  }

  /** Holds {@code seq}'s ranges to the max in force when each was read, and to its deletions. */
  void check(SequenceRecords seq, Evidence evidence, Tally tally) {
    String name = seq.spec.name();
    List<Change> raises = of("update", name).stream().filter(c -> c.max() != Long.MIN_VALUE).toList();
    long created = createdMax.getOrDefault(name, seq.spec.max());
    List<long[]> deleted = windows(name);
    if (raises.isEmpty() && deleted.isEmpty()) {
      return;
    }
    int n = seq.spec.stripes();
    for (ReceivedRange r : seq.ranges) {
      long last = lastId(r.first(), r.count(), r.stride());
      if (r.stride() != n || r.count() < 1 || last == Long.MIN_VALUE || !seq.spec.inBounds(r.first())
          || !seq.spec.inBounds(last)) {
        continue; // out of bounds whatever was attempted: RangeCheck's
      }
      long allowed = created;
      for (Change c : raises) {
        if (c.startedNanos() < r.receivedNanos()) {
          allowed = Math.max(allowed, c.max());
        }
      }
      long above = r.count() - idsAtOrBelow(r.first(), r.count(), r.stride(), allowed);
      if (above > 0) {
        aboveMax += above;
        tally.outOfBounds += above;
        evidence.note("out_of_bounds", above + " IDs of " + name + " above " + allowed + ", the highest max"
            + " attempted before it was read: " + r.describe());
      }
      for (long[] w : deleted) {
        if (r.callStartNanos() > w[0] && r.receivedNanos() < w[1]) {
          deletedServed += r.count();
          evidence.note("deleted_served", name + " deleted (confirmed " + secs(w[0]) + ", undelete started "
              + (w[1] == Long.MAX_VALUE ? "never" : secs(w[1])) + ") served " + r.describe());
        }
      }
    }
  }

  /**
   * {@code name}'s deletions for certain: from the return of each confirmed delete to the start of the next
   * undelete (or the end of the run), as {@code {from, to}} run-clock nanos.
   */
  private List<long[]> windows(String name) {
    List<Change> undeletes = of("undelete", name);
    List<long[]> windows = new ArrayList<>();
    for (Change d : of("delete", name)) {
      if (Redefinitions.DELETED.test(d.outcome())) {
        long to = Long.MAX_VALUE;
        for (Change u : undeletes) {
          if (u.startedNanos() > d.returnedNanos()) {
            to = Math.min(to, u.startedNanos());
          }
        }
        windows.add(new long[] {d.returnedNanos(), to});
      }
    }
    return windows;
  }

  private List<Change> of(String op, String name) {
    return lines.stream().filter(c -> c.op().equals(op) && c.name().equals(name)).toList();
  }

  /** Every sequence checked: the totals; printed if the run changed a definition. */
  Totals totals(PrintStream out) {
    long changes = lines.stream().filter(c -> !c.op().equals("call")).count();
    if (changes == 0) {
      return Totals.NONE;
    }
    Map<String, Long> outcomes = new TreeMap<>();
    Map<String, Long> whileDeleted = new TreeMap<>();
    Map<String, Long> raisedTo = new TreeMap<>();
    long whileDeletedCalls = 0;
    Map<String, List<long[]>> windowsByName = new HashMap<>(); // each sequence's, read once
    for (Change c : lines) {
      if (c.op().equals("call")) {
        List<long[]> deletions = windowsByName.computeIfAbsent(c.name(), this::windows);
        if (deletions.stream().anyMatch(w -> c.startedNanos() > w[0] && c.returnedNanos() < w[1])) {
          whileDeletedCalls++;
          whileDeleted.merge(c.outcome(), 1L, Long::sum);
        }
      } else {
        outcomes.merge(c.op() + ":" + c.outcome(), 1L, Long::sum);
        if (c.op().equals("update") && c.max() != Long.MIN_VALUE) {
          raisedTo.merge(c.name(), c.max(), Math::max);
        }
      }
    }
    long updates = count("update", null);
    long deletes = count("delete", null);
    Totals t = new Totals(changes, updates, count("update", "OK"), deletes,
        lines.stream().filter(c -> c.op().equals("delete") && Redefinitions.DELETED.test(c.outcome())).count(),
        count("undelete", null), whileDeletedCalls, whileDeleted.getOrDefault("NOT_FOUND:SEQUENCE_DELETED", 0L),
        deletedServed, aboveMax);
    out.printf("definitions: changes=%d %s; max attempted %s, ended %s; %d IDs above the max attempted before"
        + " they were read (in out_of_bounds); %d calls inside a confirmed deletion: %s; deleted_served=%d%n",
        changes, outcomes, raisedTo, finalMax.entrySet().stream().filter(e -> raisedTo.containsKey(e.getKey()))
            .toList(), aboveMax, whileDeletedCalls, whileDeleted, deletedServed);
    return t;
  }

  private long count(String op, String outcome) {
    return lines.stream().filter(c -> c.op().equals(op) && (outcome == null || c.outcome().equals(outcome)))
        .count();
  }
}
