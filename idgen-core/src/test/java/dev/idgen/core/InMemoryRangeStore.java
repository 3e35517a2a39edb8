package dev.idgen.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A non-durable {@link RangeStore} for unit tests of the allocator's logic. Never evidence that a real
 * store works. Every method is synchronized: the point is simple, obviously correct state.
 */
public class InMemoryRangeStore implements RangeStore {
  private final TreeMap<String, SequenceDefinition> definitions = new TreeMap<>();
  private final Map<String, long[]> reserved = new HashMap<>();
  /** Sizes asked of {@link #reserve}, in call order. */
  public final List<Long> requestedSizes = new ArrayList<>();
  public final AtomicInteger reserveCalls = new AtomicInteger();

  @Override
  public synchronized void create(SequenceDefinition d) {
    if (definitions.containsKey(d.name())) {
      throw new SequenceAlreadyExistsException("sequence '" + d.name() + "' already exists");
    }
    definitions.put(d.name(), d);
    reserved.put(d.name(), new long[d.stripes()]);
  }

  @Override
  public synchronized Optional<SequenceDefinition> find(String name) {
    return Optional.ofNullable(definitions.get(name));
  }

  @Override
  public synchronized List<SequenceDefinition> list(String afterName, int limit) {
    return definitions.tailMap(afterName, false).values().stream().limit(limit).toList();
  }

  @Override
  public IdRange reserve(SequenceDefinition d, int stripe, long size) {
    reserveCalls.incrementAndGet();
    beforeReserve(d, stripe, size);
    synchronized (this) {
      requestedSizes.add(size);
      long[] r = reserved.get(d.name());
      if (r == null) {
        throw new SequenceNotFoundException("sequence '" + d.name() + "' does not exist");
      }
      long from = r[stripe];
      long total = d.stripeSize(stripe);
      if (from == total) {
        throw new SequenceExhaustedException(d.name(), d.max());
      }
      long to = Math.min(total, from + size);
      r[stripe] = to;
      return d.range(stripe, from, to);
    }
  }

  /** A hook for tests: runs before each reservation, outside the lock (may block or throw). */
  protected void beforeReserve(SequenceDefinition d, int stripe, long size) {}

  @Override
  public synchronized void advance(SequenceDefinition d, long floor) {
    long[] r = reserved.get(d.name());
    for (int k = 0; k < r.length; k++) {
      r[k] = Math.max(r[k], d.firstIndexAbove(k, floor));
    }
  }

  @Override
  public synchronized SequenceState state(SequenceDefinition d) {
    long[] r = reserved.get(d.name());
    List<SequenceState.Stripe> stripes = new ArrayList<>();
    for (int k = 0; k < r.length; k++) {
      stripes.add(new SequenceState.Stripe(k, r[k], d.stripeSize(k)));
    }
    return new SequenceState(stripes, List.of());
  }

  @Override
  public void close() {}
}
