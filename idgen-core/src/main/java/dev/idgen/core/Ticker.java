package dev.idgen.core;

/**
 * A source of monotonic nanoseconds, injectable so that tests control time instead of sleeping.
 */
@FunctionalInterface
public interface Ticker {
  /** Nanoseconds from an arbitrary origin; only differences are meaningful. */
  long nanos();

  /** The system's monotonic clock. */
  static Ticker system() {
    return System::nanoTime;
  }
}
