package dev.idgen.chaos;

/** The run's monotonic clock: nanoseconds since the run's epoch, shared by every recorder of one run. */
final class RunClock {
  private final long epoch = System.nanoTime();

  long nanos() {
    return System.nanoTime() - epoch;
  }

  long millis() {
    return nanos() / 1_000_000;
  }
}
