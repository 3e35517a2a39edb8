package dev.idgen.bench.scaling;

import dev.idgen.bench.scaling.Chart.Line;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries.XYSeriesRenderStyle;
import org.knowm.xchart.style.Styler.LegendPosition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code plot}: draws the PNG plots of SCALING.md ({@link #CHARTS}) from the CSV files the scaling scripts
 * wrote, each PNG beside its CSV. A CSV that is missing, or has no point for a chart, is skipped with a
 * note: the plots of the curves measured so far are drawn.
 */
@Command(name = "plot", mixinStandardHelpOptions = true,
    description = "Draw the PNG plots of SCALING.md from the CSV files in a directory (written beside them).")
final class PlotCurves implements Callable<Integer> {

  static final int WIDTH = 800;
  static final int HEIGHT = 500;

  private static final String SEQUENCES = "sequences.csv";
  private static final String SERVERS = "servers.csv";
  private static final String CLIENTS = "clients.csv";
  private static final String COST = "cost.csv";
  private static final String CAS = "cas-limit.csv";

  /** Every plot of SCALING.md; the column names are those the scripts write (scenarios/scaling-*.sh). */
  static final List<Chart> CHARTS = List.of(
      new Chart(SEQUENCES, "sequences-memory.png", "Server memory vs sequences loaded", "sequences",
          "sequences loaded (each allocated once)", "MiB", true, false, List.of(
              Line.of("RSS", "rss_mb"), Line.of("heap in use after a full GC", "heap_used_mb"))),
      new Chart(SEQUENCES, "sequences-idle-cpu.png", "Idle CPU (no traffic, 30 s) vs sequences loaded",
          "sequences", "sequences loaded", "cores", true, false, List.of(
              Line.of("server", "server_idle_cores"), Line.of("Cassandra", "cassandra_idle_cores"),
              Line.of("Cassandra, no server running", "cassandra_idle_base_cores"))),
      new Chart(SEQUENCES, "sequences-startup.png", "Start-up and loading time vs sequences", "sequences",
          "sequences", "seconds", true, true, List.of(
              Line.of("server start (JVM to serving)", "start_s"),
              Line.of("loading them into a restarted server (1 Allocate each)", "load_s"),
              Line.of("loading them the first time (fresh pools)", "first_load_s"),
              Line.of("creating them (CreateSequence)", "create_s"),
              Line.of("stopping (SIGTERM: every reserve given back)", "stop_s"))),
      new Chart(SEQUENCES, "sequences-throughput.png", "Allocate calls/s spread over the sequences",
          "sequences", "sequences loaded", "calls/s (1 ID each, 10 callers)", true, false, List.of(
              Line.of("uniform", "uniform_calls_s"), Line.of("Zipf (s = 1)", "zipf_calls_s"))),
      new Chart(SERVERS, "servers-conflicts.png", "DC-pool CAS conflicts vs servers sharing the pool",
          "servers", "allocator servers in the datacenter (log)", "conflicts per second", true, false, List.of(
              Line.of("1 stripe, node_block_size 1,000", "dc_conflicts_per_s")
                  .where("stripes", "1").where("node_block_size", "1000"),
              Line.of("4 stripes, node_block_size 1,000", "dc_conflicts_per_s")
                  .where("stripes", "4").where("node_block_size", "1000"),
              Line.of("1 stripe, default sizing", "dc_conflicts_per_s")
                  .where("stripes", "1").where("node_block_size", "default"),
              Line.of("4 stripes, default sizing", "dc_conflicts_per_s")
                  .where("stripes", "4").where("node_block_size", "default"))),
      new Chart(SERVERS, "servers-refill.png", "Refill latency (p99) vs servers sharing the pool", "servers",
          "allocator servers in the datacenter (log)", "idgen_refill_seconds p99, ms (log)", true, true, List.of(
              Line.of("1 stripe, node_block_size 1,000", "refill_p99_ms")
                  .where("stripes", "1").where("node_block_size", "1000"),
              Line.of("4 stripes, node_block_size 1,000", "refill_p99_ms")
                  .where("stripes", "4").where("node_block_size", "1000"),
              Line.of("1 stripe, default sizing", "refill_p99_ms")
                  .where("stripes", "1").where("node_block_size", "default"),
              Line.of("4 stripes, default sizing", "refill_p99_ms")
                  .where("stripes", "4").where("node_block_size", "default"))),
      new Chart(SERVERS, "servers-p999.png", "Allocate p99.9 vs servers (fixed total rate)", "servers",
          "allocator servers in the datacenter (log)", "Allocate p99.9, ms", true, false, List.of(
              Line.of("1 stripe, node_block_size 1,000", "p999_ms")
                  .where("stripes", "1").where("node_block_size", "1000"),
              Line.of("4 stripes, node_block_size 1,000", "p999_ms")
                  .where("stripes", "4").where("node_block_size", "1000"),
              Line.of("1 stripe, default sizing", "p999_ms")
                  .where("stripes", "1").where("node_block_size", "default"),
              Line.of("4 stripes, default sizing", "p999_ms")
                  .where("stripes", "4").where("node_block_size", "default"))),
      new Chart(CLIENTS, "clients-memory.png", "Server memory vs concurrent calls", "concurrent",
          "connections (paced), or connections x streams (closed loop)", "server RSS, MiB", true, false, List.of(
              Line.of("paced: 5,000 calls/s over N connections", "rss_mb").where("kind", "paced"),
              Line.of("closed loop, as fast as they go", "rss_mb").where("kind", "closed"))),
      new Chart(CLIENTS, "clients-latency.png", "Allocate p99 vs concurrent calls", "concurrent",
          "connections (paced), or connections x streams (closed loop)", "p99, ms", true, true, List.of(
              Line.of("paced: 5,000 calls/s over N connections", "p99_ms").where("kind", "paced"),
              Line.of("closed loop, as fast as they go", "p99_ms").where("kind", "closed"))),
      new Chart(CLIENTS, "clients-throughput.png", "Allocate calls/s vs concurrent calls", "concurrent",
          "connections (paced), or connections x streams (closed loop)", "calls/s", true, false, List.of(
              Line.of("paced: 5,000 calls/s over N connections", "calls_s").where("kind", "paced"),
              Line.of("closed loop, as fast as they go", "calls_s").where("kind", "closed"))),
      new Chart(COST, "cost.png", "Lightweight transactions per million IDs vs the rate", "rate_ids_s",
          "IDs/s (paced)", "CAS per million IDs", true, true, List.of(
              Line.of("measured, steady state (after the warm-up)", "cas_per_million"),
              Line.of("measured, from the sequence's creation", "cold_cas_per_million"),
              Line.of("model: one CAS per refill step (75 s, or 20 M IDs)", "model_per_million"))),
      new Chart(CAS, "cas-limit.png", "Compare-and-sets per second, one Cassandra node", "threads",
          "threads, each looping on one row (no back-off)", "successful CAS/s", false, false, List.of(
              Line.of("1 partition", "successful_per_s").where("partitions", "1"),
              Line.of("5 partitions", "successful_per_s").where("partitions", "5"),
              Line.of("20 partitions", "successful_per_s").where("partitions", "20"))));

  @Option(names = "--dir", defaultValue = "docs/scaling",
      description = "The directory of the CSV files; the PNGs are written there. Default: ${DEFAULT-VALUE}.")
  Path dir;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    for (Chart chart : CHARTS) {
      Path csv = dir.resolve(chart.csv());
      if (!Files.isRegularFile(csv)) {
        out.printf("skipped %s: no %s%n", chart.png(), csv);
        continue;
      }
      boolean drawn = draw(chart, Csv.read(csv), dir.resolve(chart.png()));
      out.printf("%s %s%n", drawn ? "wrote" : "skipped (no points)", dir.resolve(chart.png()));
    }
    out.flush();
    return 0;
  }

  /** Draws {@code chart} from {@code data} into {@code png}; false (and nothing written) if it has no point. */
  static boolean draw(Chart chart, Csv data, Path png) throws IOException {
    System.setProperty("java.awt.headless", "true");
    XYChart xy = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(chart.title())
        .xAxisTitle(chart.xTitle()).yAxisTitle(chart.yTitle()).build();
    xy.getStyler().setDefaultSeriesRenderStyle(XYSeriesRenderStyle.Line);
    xy.getStyler().setXAxisLogarithmic(chart.logX());
    xy.getStyler().setYAxisLogarithmic(chart.logY());
    xy.getStyler().setLegendPosition(LegendPosition.InsideNW);
    xy.getStyler().setChartBackgroundColor(Color.WHITE);
    xy.getStyler().setMarkerSize(7);
    xy.getStyler().setDecimalPattern("#,##0.###");
    boolean any = false;
    for (Line line : chart.lines()) {
      double[][] p = chart.points(data, line);
      if (p[0].length > 0) {
        xy.addSeries(line.label(), p[0], p[1]);
        any = true;
      }
    }
    if (!any) {
      return false;
    }
    try (OutputStream out = Files.newOutputStream(png)) {
      BitmapEncoder.saveBitmap(xy, out, BitmapFormat.PNG);
    }
    return true;
  }
}
