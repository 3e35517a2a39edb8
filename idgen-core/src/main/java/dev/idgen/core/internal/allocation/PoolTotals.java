package dev.idgen.core.internal.allocation;

/** Sums of pool counters. Not thread-safe: local, or guarded by the lock of the retired totals ({@link Runtimes}). */
public final class PoolTotals {
  public long served, reservations, dropped, held, returned, abandoned, lowWater;

  public void add(StripePool.Counters c) {
    served += c.served();
    reservations += c.reservations();
    dropped += c.dropped();
    held += c.available();
    returned += c.returned();
    abandoned += c.abandoned();
    lowWater += c.lowWater();
  }

  public void add(PoolTotals o) {
    served += o.served;
    reservations += o.reservations;
    dropped += o.dropped;
    held += o.held;
    returned += o.returned;
    abandoned += o.abandoned;
    lowWater += o.lowWater;
  }
}
