package dev.idgen.bench.scaling;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code percentiles}: latency percentiles of the requests in h2load's {@code --log-file} files (h2load itself
 * prints only min, max, mean and deviation). Each line of such a file is {@code start-µs-since-epoch TAB
 * http-status TAB µs-until-the-end-of-the-response}; several files (one per h2load process) are merged.
 * Requests that started before {@code --from-epoch-ms} are left out (h2load logs its warm-up too). Prints
 * one line: {@code count=… p50_ms=… p99_ms=… p999_ms=… max_ms=… non200=…}. Note that h2load answers HTTP
 * 200 for a gRPC error too (the error is in the trailers): the scripts count errors from the server's
 * metrics.
 */
@Command(name = "percentiles", mixinStandardHelpOptions = true,
    description = "Latency percentiles from h2load --log-file files (merged).")
final class H2loadPercentiles implements Callable<Integer> {

  @Option(names = "--from-epoch-ms", defaultValue = "0",
      description = "Leave out requests that started before this time (ms since the epoch). Default: none.")
  long fromEpochMillis;

  @Parameters(arity = "1..*", paramLabel = "FILE", description = "h2load --log-file files.")
  List<Path> files;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    Histogram micros = new Histogram(3_600_000_000L, 3);
    long non200 = 0;
    long fromMicros = fromEpochMillis * 1000;
    for (Path file : files) {
      try (BufferedReader in = Files.newBufferedReader(file)) {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          String[] f = line.split("\t");
          if (f.length < 3 || Long.parseLong(f[0]) < fromMicros) {
            continue;
          }
          if (!"200".equals(f[1])) {
            non200++;
          }
          micros.recordValue(Math.min(Long.parseLong(f[2]), micros.getHighestTrackableValue()));
        }
      }
    }
    PrintWriter out = spec.commandLine().getOut();
    out.println(summary(micros, non200));
    out.flush();
    return 0;
  }

  static String summary(Histogram micros, long non200) {
    boolean empty = micros.getTotalCount() == 0;
    return String.format(Locale.ROOT, "count=%d p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f non200=%d",
        micros.getTotalCount(), empty ? 0 : micros.getValueAtPercentile(50) / 1000.0,
        empty ? 0 : micros.getValueAtPercentile(99) / 1000.0,
        empty ? 0 : micros.getValueAtPercentile(99.9) / 1000.0,
        empty ? 0 : micros.getMaxValue() / 1000.0, non200);
  }
}
