package dev.idgen.chaos;

import dev.idgen.api.v1.DatacenterReserve;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.StripeState;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The end of a run, what the checker's reckoning reads: waits for the bursts and restarts still under way,
 * deletes every fault rule, resumes every paused node, restarts any dead server, stops the clients (calls in
 * flight finish and are recorded), completes the advances that failed, waits until two snapshots of
 * {@code GetSequence} agree and records them ({@code final-stripe}, {@code final-held}, {@code final-definition}:
 * the max and block sizes the cursors were read under, which the redefine kind may have changed), every server's
 * counters ({@code reported … end}), the servers' idle unloads ({@code unloads}), and the {@code end} line
 * (without which the checker calls the run incomplete).
 *
 * <p>Threads: the fault thread's, once the schedule is over; the other threads of the run are awaited or
 * stopped here first.
 */
final class Reckoning {
  /** The line a server logs after an idle sweep that unloaded something (Allocator). */
  private static final Pattern UNLOADED = Pattern.compile("unloaded (\\d+) sequence\\(s\\) idle for");

  private final FaultContext run;

  Reckoning(FaultContext run) {
    this.run = run;
  }

  void finish() throws Exception {
    run.restarts().awaitAll();
    run.bursts().awaitAll();
    run.network().ifPresent(ChaosNetwork::healAll);
    run.cassandra().resumeAll();
    for (ServerNode s : run.fleet().nodes()) {
      if (!s.alive()) {
        run.fleet().start(s);
        run.started(s);
      }
    }
    run.say("stopping the clients");
    run.owners().stop();
    FreshAdvance f = run.freshOrNull();
    if (f != null) {
      f.close(); // its prober's calls finish and are recorded first
    }
    Redefinitions r = run.redefinitionsOrNull();
    if (r != null) {
      r.close(); // its cycles ended with the bursts
    }
    run.clients().stopAll();
    run.bursts().completeFailed();
    // What is still held, once the servers' refills and floor polls have settled: two equal snapshots.
    List<String> previous = List.of();
    for (int attempt = 0; attempt < 30; attempt++) {
      Thread.sleep(1_500);
      List<String> snapshot = snapshot();
      if (snapshot.equals(previous)) {
        break;
      }
      previous = snapshot;
    }
    RunLog log = run.log();
    for (String line : previous) {
      log.line(line);
    }
    for (ServerNode node : run.fleet().nodes()) {
      run.report(node, "end");
    }
    logUnloads();
    log.line("faults-injected", run.injected());
    log.line("end", run.clock().millis());
  }

  /** What the servers unloaded as idle, from every incarnation's log: an {@code unloads} line. */
  private void logUnloads() {
    long lines = 0;
    long unloaded = 0;
    try (Stream<Path> logs = Files.list(run.settings().out().resolve("servers"))) {
      for (Path p : logs.filter(p -> p.getFileName().toString().matches("server-\\d+-\\d+\\.log")).toList()) {
        try (Stream<String> text = Files.lines(p, StandardCharsets.ISO_8859_1)) {
          for (String line : (Iterable<String>) text::iterator) {
            Matcher m = UNLOADED.matcher(line);
            if (m.find()) {
              lines++;
              unloaded += Long.parseLong(m.group(1));
            }
          }
        }
      }
    } catch (IOException | UncheckedIOException e) {
      run.say("could not read the servers' logs for their idle unloads: " + e);
      lines = -1;
      unloaded = -1;
    }
    run.log().line("unloads", run.settings().unloadIdleAfter().toMillis(), lines, unloaded);
  }

  /** The global cursors, and what each datacenter's pool and each server hold, as the servers say now. */
  private List<String> snapshot() {
    List<String> lines = new ArrayList<>();
    Fleet fleet = run.fleet();
    for (SequenceSpec seq : run.sequences().all()) {
      GetSequenceRequest request = GetSequenceRequest.newBuilder().setName(seq.name()).build();
      Sequence state = Fleet.admin(fleet.get(0), 30).getSequence(request);
      lines.add("final-definition " + seq.name() + " " + state.getMax() + " " + state.getNodeBlockSize() + " "
          + state.getDcBlockSize() + " " + (state.hasDeleteTime() ? "deleted" : "live"));
      for (StripeState s : state.getStripeStatesList()) {
        lines.add("final-stripe " + seq.name() + " " + s.getStripe() + " "
            + (s.hasNextUnreserved() ? Long.toString(s.getNextUnreserved()) : "-") + " " + s.getRemaining());
      }
      // Each datacenter's pool as a server of that datacenter reads it: a pool row is written in its own
      // datacenter, and another datacenter's replica of it may still lag (hints after a pause), which
      // would count IDs twice.
      Set<String> poolsRead = new HashSet<>();
      for (ServerNode node : fleet.nodes()) {
        Sequence own = Fleet.admin(node, 30).getSequence(request);
        if (poolsRead.add(node.datacenter())) {
          for (DatacenterReserve r : own.getDatacenterReservesList()) {
            if (r.getDatacenter().equals(node.datacenter())) {
              lines.add("final-held " + seq.name() + " dc:" + r.getDatacenter() + ":" + r.getStripe() + " "
                  + r.getIds());
            }
          }
        }
        lines.add("final-held " + seq.name() + " server:" + node.name() + " " + own.getServerReserve());
      }
    }
    return lines;
  }
}
