package dev.idgen.core;

/**
 * A source of wall-clock milliseconds, injectable so that tests can step it. Leases that guard uniqueness or
 * order are checked against it as well as against the monotonic {@link Ticker}: the monotonic clock stops
 * while a virtual machine is suspended (a freeze it hides), and the wall clock jumps when it is stepped (a
 * freeze or a step the other shows), so a lease holds only while neither says it has run out.
 */
@FunctionalInterface
public interface WallClock {
  /** Milliseconds since the epoch, as the system's real-time clock says. */
  long millis();

  /** The system's real-time clock. */
  static WallClock system() {
    return System::currentTimeMillis;
  }
}
