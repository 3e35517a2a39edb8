package dev.idgen.bench.loadgen;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.io.PrintWriter;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The result of one load generator run: throughput over the measured window, latency percentiles of the
 * calls completed in it, errors by status, and the store's CAS counts over it. Printed as text or JSON.
 *
 * <p>Latency is measured closed-loop (each caller waits for its answer before the next call), so it is
 * the service time seen by the callers, not corrected for coordinated omission.
 */
final class LoadReport {
  final String mode;
  final String target;
  final String sequence;
  final int concurrency;
  final long idsPerCall;
  final double warmupSeconds;
  final double seconds;
  final long calls;
  final long ids;
  final Histogram latencyNanos;
  final Map<String, Long> errors;
  /** null: no --metrics-url; otherwise the deltas, or an error message (see {@link #metricsNote}). */
  final Map<String, Map<String, Long>> casByTier;
  final Long reservations;
  final String metricsNote;
  final Map<String, Object> clientStats; // client mode only, else null
  final String loadBefore;
  final String loadAfter;
  final Long serverRssKbMax; // null without --server-pid
  /** CPU time the load generator's process used during the window. */
  final double loadgenCpuSeconds;
  /** CPU time the server process used during the window; null without --server-pid. */
  final Double serverCpuSeconds;

  LoadReport(String mode, String target, String sequence, int concurrency, long idsPerCall,
      double warmupSeconds, double seconds, long calls, long ids, Histogram latencyNanos,
      Map<String, Long> errors, Map<String, Map<String, Long>> casByTier, Long reservations,
      String metricsNote, Map<String, Object> clientStats, String loadBefore, String loadAfter,
      Long serverRssKbMax, double loadgenCpuSeconds, Double serverCpuSeconds) {
    this.mode = mode;
    this.target = target;
    this.sequence = sequence;
    this.concurrency = concurrency;
    this.idsPerCall = idsPerCall;
    this.warmupSeconds = warmupSeconds;
    this.seconds = seconds;
    this.calls = calls;
    this.ids = ids;
    this.latencyNanos = latencyNanos;
    this.errors = new TreeMap<>(errors);
    this.casByTier = casByTier;
    this.reservations = reservations;
    this.metricsNote = metricsNote;
    this.clientStats = clientStats;
    this.loadBefore = loadBefore;
    this.loadAfter = loadAfter;
    this.serverRssKbMax = serverRssKbMax;
    this.loadgenCpuSeconds = loadgenCpuSeconds;
    this.serverCpuSeconds = serverCpuSeconds;
  }

  double idsPerSecond() {
    return ids / seconds;
  }

  double callsPerSecond() {
    return calls / seconds;
  }

  private double micros(double percentile) {
    return latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getValueAtPercentile(percentile) / 1000.0;
  }

  private double maxMicros() {
    return latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getMaxValue() / 1000.0;
  }

  JsonObject toJson() {
    JsonObject o = new JsonObject();
    o.addProperty("mode", mode);
    o.addProperty("target", target);
    o.addProperty("sequence", sequence);
    o.addProperty("concurrency", concurrency);
    o.addProperty("idsPerCall", idsPerCall);
    o.addProperty("warmupSeconds", warmupSeconds);
    o.addProperty("seconds", seconds);
    o.addProperty("calls", calls);
    o.addProperty("ids", ids);
    o.addProperty("callsPerSecond", Math.round(callsPerSecond()));
    o.addProperty("idsPerSecond", Math.round(idsPerSecond()));
    JsonObject lat = new JsonObject();
    lat.addProperty("unit", "us");
    lat.addProperty("count", latencyNanos.getTotalCount());
    lat.addProperty("mean", round(latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getMean() / 1000.0));
    lat.addProperty("p50", round(micros(50)));
    lat.addProperty("p90", round(micros(90)));
    lat.addProperty("p99", round(micros(99)));
    lat.addProperty("p999", round(micros(99.9)));
    lat.addProperty("max", round(maxMicros()));
    o.add("latency", lat);
    JsonObject err = new JsonObject();
    errors.forEach(err::addProperty);
    o.add("errors", err);
    o.add("cas", casJson());
    if (clientStats != null) {
      JsonObject cs = new JsonObject();
      clientStats.forEach((k, v) -> cs.add(k, v instanceof Number n ? new JsonPrimitive(n)
          : new JsonPrimitive(String.valueOf(v))));
      o.add("clientStats", cs);
    }
    o.addProperty("loadAverageBefore", loadBefore);
    o.addProperty("loadAverageAfter", loadAfter);
    if (serverRssKbMax != null) {
      o.addProperty("serverRssKbMax", serverRssKbMax);
    }
    o.addProperty("loadgenCpuSeconds", round(loadgenCpuSeconds));
    if (serverCpuSeconds != null) {
      o.addProperty("serverCpuSeconds", round(serverCpuSeconds));
      if (serverCpuSeconds > 0) {
        o.addProperty("serverCallsPerCpuSecond", Math.round(calls / serverCpuSeconds));
      }
    }
    return o;
  }

  private JsonElement casJson() {
    if (casByTier == null) {
      return new JsonPrimitive(metricsNote);
    }
    JsonObject cas = new JsonObject();
    casByTier.forEach((tier, outcomes) -> {
      JsonObject t = new JsonObject();
      outcomes.forEach(t::addProperty);
      cas.add(tier, t);
    });
    if (reservations != null) {
      cas.addProperty("embeddedReservations", reservations);
    }
    if (metricsNote != null) {
      cas.addProperty("note", metricsNote);
    }
    return cas;
  }

  void printJson(PrintWriter out) {
    out.println(new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(toJson()));
    out.flush();
  }

  void printText(PrintWriter out) {
    out.printf("idgen load: mode=%s target=%s sequence=%s concurrency=%d ids-per-call=%d%n",
        mode, target, sequence, concurrency, idsPerCall);
    out.printf("  window      %.1f s after %.1f s warm-up%n", seconds, warmupSeconds);
    out.printf("  throughput  %,.0f IDs/s, %,.0f calls/s (%,d IDs in %,d calls)%n",
        idsPerSecond(), callsPerSecond(), ids, calls);
    out.printf("  latency us  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  (mean %.1f, closed loop)%n",
        micros(50), micros(90), micros(99), micros(99.9), maxMicros(),
        latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getMean() / 1000.0);
    out.printf("  errors      %s%n", errors.isEmpty() ? "none" : errors);
    if (casByTier == null) {
      out.printf("  store CAS   %s%n", metricsNote);
    } else {
      out.printf("  store CAS   %s%s%s%n", casByTier.isEmpty() ? "no CAS series" : casByTier,
          reservations == null ? "" : ", embedded reservations " + reservations,
          metricsNote == null ? "" : " (" + metricsNote + ")");
    }
    if (clientStats != null) {
      out.printf("  client      %s%n", clientStats);
    }
    if (serverRssKbMax != null) {
      out.printf("  server RSS  max %,d KiB%n", serverRssKbMax);
    }
    out.printf("  CPU         load generator %.1f s%s of %.1f s wall, 2 cores shared with everything else%n",
        loadgenCpuSeconds, serverCpuSeconds == null ? ""
            : String.format(", server %.1f s (%,.0f calls per server CPU-second)", serverCpuSeconds,
                serverCpuSeconds > 0 ? calls / serverCpuSeconds : 0.0), seconds);
    out.printf("  loadavg     before [%s] after [%s]%n", loadBefore, loadAfter);
    out.flush();
  }

  private static double round(double v) {
    return Math.round(v * 10) / 10.0;
  }
}
