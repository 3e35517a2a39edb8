package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.lastId;

import dev.idgen.api.v1.Ordering;
import dev.idgen.chaos.RunLog.Contents;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Reads the clients' record files ({@code client-*.bin}, {@link Recorder}'s format) of the clients the run
 * started, into one {@link SequenceRecords} per sequence, and judges on the way what needs no more than one
 * record: ranges of unknown sequences ({@code out_of_bounds}), ranges stamped with the wrong ordering
 * ({@code wrong_stamps}), calls that ended OK with the wrong count ({@code bad_calls}); it counts what failed
 * calls asked for and did not receive, and the strict calls a forwarder answered. Single-threaded; its
 * counts are read once {@link #read} returned.
 */
final class RecordReader {
  final Map<String, SequenceRecords> sequences = new HashMap<>();
  long ids;
  long served;
  long stamped;
  long wrongStamps;
  long forwardedCalls;
  long forwardedUnmarked;
  long outOfBounds;
  long badCalls;
  long failedOutstanding;
  /** The client files read. */
  int files;

  private final Contents run;
  private final FaultTable table;
  private final Evidence evidence;
  private final Map<Integer, String> targets = new HashMap<>();
  private final Owners owners;

  /** {@code definitions}: what the run changed of its sequences, which bounds their records. */
  RecordReader(Contents run, FaultTable table, Evidence evidence, DefinitionCheck definitions) {
    this.run = run;
    this.table = table;
    this.evidence = evidence;
    for (SequenceSpec s : run.sequences()) {
      sequences.put(s.name(), definitions.records(s));
    }
    run.servers().forEach(sl -> targets.put(sl.slot(), sl.target()));
    this.owners = new Owners(run.owners());
  }

  /** Reads the client files in {@code dir}; says on {@code out} which it ignored (not of this run). */
  void read(Path dir, PrintStream out) throws IOException {
    List<Path> list;
    try (Stream<Path> all = Files.list(dir)) {
      list = all.filter(p -> p.getFileName().toString().matches("client-\\d+\\.bin")).sorted().toList();
    }
    if (!run.clients().isEmpty()) { // the run named its clients: any other file is not of this run
      List<Path> others = list.stream().filter(p -> !run.clients().contains(clientOf(p))).toList();
      if (!others.isEmpty()) {
        out.printf("ignored %d client files the run did not start: %s%n", others.size(),
            others.stream().map(p -> p.getFileName().toString()).toList());
        list = list.stream().filter(p -> run.clients().contains(clientOf(p))).toList();
      }
    }
    files = list.size();
    for (Path file : list) {
      readFile(file, clientOf(file));
    }
  }

  private void readFile(Path file, int client) throws IOException {
    try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
      while (true) {
        int tag;
        try {
          tag = in.readByte();
        } catch (EOFException end) {
          break;
        }
        String name = in.readUTF();
        SequenceRecords seq = sequences.get(name);
        switch (tag) {
          case Recorder.RANGE, Recorder.SERVER_RANGE, Recorder.STAMPED_RANGE -> range(in, tag, client, name, seq);
          case Recorder.FAILED_CALL -> failedCall(in, client, name);
          case Recorder.BATCH -> batch(in, client, seq);
          case Recorder.SERVED_IDS -> servedIds(in, client, seq);
          case Recorder.CALL -> call(in, client, name, seq);
          default -> throw new IOException(file + ": corrupt record tag " + tag);
        }
      }
    }
  }

  private void range(DataInputStream in, int tag, int client, String name, SequenceRecords seq) throws IOException {
    int server = tag == Recorder.RANGE ? -1 : in.readUnsignedByte();
    // The call's start decides "after an advance"; the time the range was read is for people.
    ReceivedRange r = new ReceivedRange(client, server, in.readLong(), in.readLong(), in.readLong(), in.readLong(),
        in.readLong());
    if (tag == Recorder.STAMPED_RANGE) {
      int ordering = in.readUnsignedByte();
      stamped++;
      if (seq != null && (seq.spec.strict() ? ordering != Ordering.ORDERING_STRICT_VALUE
          : ordering == Ordering.ORDERING_STRICT_VALUE)) {
        wrongStamps++;
        evidence.note("wrong_stamps", name + " (" + (seq.spec.strict() ? "strict" : "per-server")
            + ") stamped " + Ordering.forNumber(ordering) + ": " + r.describe());
      }
    }
    ids += r.count();
    table.received(r.receivedNanos(), r.count());
    if (seq == null) {
      outOfBounds += r.count();
      evidence.note("out_of_bounds", "unknown sequence " + name + ": " + r.describe());
    } else {
      seq.ranges.add(r);
    }
  }

  private void failedCall(DataInputStream in, int client, String name) throws IOException {
    long requested = in.readLong();
    long received = in.readLong();
    String code = in.readUTF();
    if (code.equals("OK")) {
      badCalls++;
      evidence.note("bad_calls", name + ": client-" + client + " asked for " + requested + " IDs, the call ended OK"
          + " with " + received);
    } else {
      failedOutstanding += Math.max(0, requested - received);
    }
  }

  private void batch(DataInputStream in, int client, SequenceRecords seq) throws IOException {
    long asked = in.readLong();
    long handed = in.readLong();
    int runs = in.readInt();
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    long count = 0;
    for (int i = 0; i < runs; i++) {
      ServedRun r = new ServedRun(client, asked, handed, in.readLong(), in.readLong(), in.readLong());
      served(seq, r);
      long last = lastId(r.first(), r.count(), r.stride());
      if (r.count() >= 1 && r.stride() >= 1 && last != Long.MIN_VALUE) {
        min = Math.min(min, r.first());
        max = Math.max(max, last);
        count += r.count();
      }
    }
    if (seq != null && seq.spec.strict() && count > 0) {
      // Asked for before its calls started, handed out after they ended: held to the order as a call.
      seq.stubBatches.add(new StrictOrder.Call(client, StrictOrder.STUB, asked, handed, min, max, count, "OK"));
    }
  }

  /** The format before batches: IDs one by one, no time. */
  private void servedIds(DataInputStream in, int client, SequenceRecords seq) throws IOException {
    int n = in.readInt();
    long[] batch = new long[n];
    for (int i = 0; i < n; i++) {
      batch[i] = in.readLong();
    }
    long[] runs = Recorder.runs(batch, n);
    for (int i = 0; i < runs.length; i += 3) {
      served(seq, new ServedRun(client, Long.MIN_VALUE, Long.MIN_VALUE, runs[i], runs[i + 1], runs[i + 2]));
    }
  }

  private void served(SequenceRecords seq, ServedRun r) {
    served += r.count();
    if (seq != null) {
      seq.served.add(r);
      seq.servedIds += r.count();
    }
  }

  /** A strict client's whole call: its outcome, and its IDs as one span (held to the order). */
  private void call(DataInputStream in, int client, String name, SequenceRecords seq) throws IOException {
    int server = in.readUnsignedByte();
    long start = in.readLong();
    long end = in.readLong();
    String outcome = in.readUTF();
    int unmarked = in.readInt();
    int n = in.readInt();
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    long count = 0;
    for (int i = 0; i < n; i++) {
      long first = in.readLong();
      long c = in.readLong();
      long stride = in.readLong();
      long last = lastId(first, c, stride);
      if (c >= 1 && stride >= 1 && last != Long.MIN_VALUE) { // else out of bounds, seen as a range
        min = Math.min(min, first);
        max = Math.max(max, last);
        count += c;
      }
    }
    if (seq == null) {
      return;
    }
    seq.wholeCalls++;
    seq.unmarked += unmarked;
    String owner = owners.ownerAt(name, TimeUnit.NANOSECONDS.toMillis(start));
    String target = targets.get(server);
    if (owner != null && target != null && !owner.equals(target)) {
      forwardedCalls++;
      forwardedUnmarked += unmarked;
    }
    boolean ok = outcome.equals("OK");
    table.strictCall(end, ok);
    if (ok) {
      seq.okCalls++;
      seq.okEnds.add(end);
    } else {
      seq.failures.merge(outcome, 1L, Long::sum);
    }
    if (count > 0) {
      seq.calls.add(new StrictOrder.Call(client, server, start, end, min, max, count, outcome));
    }
  }

  /** The client of a {@code client-N.bin} file. */
  private static int clientOf(Path file) {
    String name = file.getFileName().toString();
    return Integer.parseInt(name.substring("client-".length(), name.length() - ".bin".length()));
  }

  /** The strict sequences' owners over time, as the run's owner lines show them. */
  private static final class Owners {
    private final Map<String, List<RunLog.OwnerSeen>> byName = new HashMap<>();

    Owners(List<RunLog.OwnerSeen> seen) {
      for (RunLog.OwnerSeen o : seen) {
        byName.computeIfAbsent(o.name(), k -> new ArrayList<>()).add(o);
      }
      byName.values().forEach(l -> l.sort(Comparator.comparingLong(RunLog.OwnerSeen::atMillis)));
    }

    /** {@code name}'s owner target as last seen at or before {@code millis}; null if none or unknown. */
    String ownerAt(String name, long millis) {
      List<RunLog.OwnerSeen> l = byName.get(name);
      if (l == null) {
        return null;
      }
      String owner = null;
      for (RunLog.OwnerSeen o : l) { // a few dozen lines per run
        if (o.atMillis() > millis) {
          break;
        }
        owner = o.target().equals("-") ? null : o.target();
      }
      return owner;
    }
  }
}
