package dev.idgen.client;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker that moves only when told. */
final class FakeTicker implements Ticker {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  @Override
  public long nanos() {
    return nanos.get();
  }

  void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }
}
