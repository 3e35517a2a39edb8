package dev.idgen.chaos;

/**
 * The run's voice on standard output: one line per event, stamped with the run clock. Called from every
 * thread of a run (the fault thread, bursts, restarts, the owner monitor); {@link #say} is synchronized so that
 * lines never interleave.
 */
final class Narrator {
  private final RunClock clock;

  Narrator(RunClock clock) {
    this.clock = clock;
  }

  synchronized void say(String message) {
    System.out.printf("[chaos %6.1fs] %s%n", clock.nanos() / 1e9, message);
  }
}
