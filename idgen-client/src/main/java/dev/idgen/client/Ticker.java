package dev.idgen.client;

/**
 * A source of monotonic nanoseconds that an {@link IdSource} uses to measure its consumption rate, and
 * so the size of its leases, and to time the expiry of its leases ({@code valid_for} counted from when
 * each request was sent). Injectable through {@link IdGenClientBuilder#ticker(Ticker)} so that tests
 * control time instead of sleeping; production code keeps the {@linkplain #system() system ticker}.
 */
@FunctionalInterface
public interface Ticker {
  /**
   * Returns nanoseconds from an arbitrary origin; only differences between two readings are meaningful,
   * and readings never decrease.
   *
   * @return the current reading, in nanoseconds
   */
  long nanos();

  /**
   * Returns the system's monotonic clock, {@link System#nanoTime()}.
   *
   * @return the system ticker
   */
  static Ticker system() {
    return System::nanoTime;
  }
}
