package dev.idgen.chaos;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * {@code run.txt}: what the harness did and saw, one event a line, flushed as it happens. Together with the
 * clients' {@code client-*.bin} files it is all {@link Checker} needs. Lines (space-separated):
 * <pre>
 *   seed SEED
 *   sequence NAME START MAX STRIPES NODE_BLOCK DC_BLOCK
 *   fault AT_MILLIS KIND LOST_BOUND DETAIL…          KIND: server-kill, cassandra-pause, client-kill, advance-burst
 *   advance NAME FLOOR RETURNED_NANOS ok|failed:CODE  one AdvanceSequence call of a burst
 *   final-stripe NAME STRIPE NEXT_UNRESERVED|- REMAINING
 *   final-held NAME WHERE IDS                        WHERE: dc:DC:STRIPE or server:NAME
 *   reported SERVER WHEN HELD COUNTED                what a server said of its own losses: WHEN kill (just
 *                                                    before its kill -9) or end; HELD its in-memory reserve
 *                                                    (GetSequence), COUNTED its idgen_ids_lost_total
 *                                                    (abandoned + dc_block) since it started; -1: unknown
 *   end DURATION_MILLIS
 * </pre>
 */
final class RunLog implements AutoCloseable {
  static final String FILE = "run.txt";

  record SequenceSpec(String name, long start, long max, int stripes, long nodeBlock, long dcBlock) {
    boolean inBounds(long id) {
      return id >= start && id <= max;
    }
  }

  record Fault(long atMillis, String kind, long lostBound, String detail) {}

  record Advance(String name, long floor, long returnedNanos, boolean ok) {}

  record FinalStripe(String name, int stripe, OptionalLong nextUnreserved, long remaining) {}

  record FinalHeld(String name, String where, long ids) {}

  /** What a server reported of its own losses, just before a kill or at the end (-1: could not ask). */
  record Reported(String server, String when, long held, long counted) {}

  /** Everything a run.txt says. */
  record Contents(String seed, List<SequenceSpec> sequences, List<Fault> faults, List<Advance> advances,
      List<FinalStripe> finalStripes, List<FinalHeld> finalHeld, List<Reported> reported, boolean ended) {}

  private final BufferedWriter out;

  RunLog(Path dir) throws IOException {
    out = Files.newBufferedWriter(dir.resolve(FILE), StandardCharsets.UTF_8);
  }

  synchronized void line(Object... tokens) {
    StringBuilder sb = new StringBuilder();
    for (Object t : tokens) {
      if (sb.length() > 0) {
        sb.append(' ');
      }
      sb.append(t);
    }
    try {
      out.write(sb.append('\n').toString());
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  void sequence(SequenceSpec s) {
    line("sequence", s.name(), s.start(), s.max(), s.stripes(), s.nodeBlock(), s.dcBlock());
  }

  void fault(long atMillis, String kind, long lostBound, String detail) {
    line("fault", atMillis, kind, lostBound, detail);
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
  }

  static Contents read(Path dir) throws IOException {
    String seed = "?";
    List<SequenceSpec> sequences = new ArrayList<>();
    List<Fault> faults = new ArrayList<>();
    List<Advance> advances = new ArrayList<>();
    List<FinalStripe> stripes = new ArrayList<>();
    List<FinalHeld> held = new ArrayList<>();
    List<Reported> reported = new ArrayList<>();
    boolean ended = false;
    for (String line : Files.readAllLines(dir.resolve(FILE), StandardCharsets.UTF_8)) {
      String[] t = line.split(" ");
      switch (t[0]) {
        case "seed" -> seed = t[1];
        case "sequence" -> sequences.add(new SequenceSpec(t[1], Long.parseLong(t[2]), Long.parseLong(t[3]),
            Integer.parseInt(t[4]), Long.parseLong(t[5]), Long.parseLong(t[6])));
        case "fault" -> faults.add(new Fault(Long.parseLong(t[1]), t[2], Long.parseLong(t[3]),
            line.split(" ", 5).length == 5 ? line.split(" ", 5)[4] : ""));
        case "advance" -> advances.add(new Advance(t[1], Long.parseLong(t[2]), Long.parseLong(t[3]),
            t[4].equals("ok")));
        case "final-stripe" -> stripes.add(new FinalStripe(t[1], Integer.parseInt(t[2]),
            t[3].equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(t[3])), Long.parseLong(t[4])));
        case "final-held" -> held.add(new FinalHeld(t[1], t[2], Long.parseLong(t[3])));
        case "reported" -> reported.add(new Reported(t[1], t[2], Long.parseLong(t[3]), Long.parseLong(t[4])));
        case "end" -> ended = true;
        default -> { } // informational lines (e.g. "note"), ignored
      }
    }
    return new Contents(seed, sequences, faults, advances, stripes, held, reported, ended);
  }
}
