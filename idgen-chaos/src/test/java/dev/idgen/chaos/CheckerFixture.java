package dev.idgen.chaos;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the checker's tests share: a run's directory with its {@code run.txt} begun ({@link #log}, opened with
 * the subclass's {@link #seed()} before its own {@code @BeforeEach} adds its sequences), records written by
 * hand with {@link #clock}, and {@link #check()}, which ends the log and runs the checker, keeping what it
 * printed ({@link #printed}).
 */
abstract class CheckerFixture {
  @TempDir
  Path dir;

  final RunClock clock = new RunClock();
  final ByteArrayOutputStream printed = new ByteArrayOutputStream();
  RunLog log;

  /** The seed the run's log begins with. */
  abstract long seed();

  @BeforeEach
  void openLog() throws Exception {
    log = new RunLog(dir);
    log.line("seed", seed());
  }

  /** Ends the run's log ({@code end}) and checks the run. */
  Checker.Report check() throws Exception {
    log.line("end", 1);
    log.close();
    return Checker.check(dir, new PrintStream(printed, true, StandardCharsets.UTF_8));
  }

  /** What the checker printed. */
  String printed() {
    return printed.toString(StandardCharsets.UTF_8);
  }

  /** A {@code final-stripe} line: {@code name}'s stripe {@code stripe} ended at {@code next}. */
  void finalState(String name, int stripe, long next) {
    log.line("final-stripe", name, stripe, next, 0);
  }
}
