package dev.idgen.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
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
    stored.put(d.name(), StoredSequence.of(d));
    reserved.put(d.name(), new long[d.stripes()]);
  }

  /** Every sequence with its version and deletion; definitions holds the same definitions. */
  private final Map<String, StoredSequence> stored = new HashMap<>();

  @Override
  public synchronized Optional<StoredSequence> findStored(String name) {
    return Optional.ofNullable(stored.get(name));
  }

  @Override
  public synchronized List<StoredSequence> listStored(String afterName, int limit) {
    return definitions.tailMap(afterName, false).keySet().stream().limit(limit).map(stored::get).toList();
  }

  /** As the real stores: a compare-and-set on the version, then an entry in the floor log. */
  @Override
  public synchronized AdvanceReceipt redefine(StoredSequence expected, StoredSequence next) {
    String name = expected.definition().name();
    StoredSequence now = stored.get(name);
    if (now == null) {
      throw new SequenceNotFoundException("sequence '" + name + "' does not exist");
    }
    if (now.version() != expected.version()) {
      throw new SequenceChangedException(name, expected.etag(), now.etag());
    }
    stored.put(name, next);
    definitions.put(name, next.definition());
    floorLog.add(FloorLog.Change.definitionChange(floorLog.size() + 1, name, next.version()));
    return refresh.isZero() ? AdvanceReceipt.NONE : new AdvanceReceipt(Map.of("local", (long) floorLog.size()));
  }

  @Override
  public synchronized Optional<SequenceDefinition> find(String name) {
    return Optional.ofNullable(definitions.get(name));
  }

  @Override
  public synchronized List<SequenceDefinition> list(String afterName, int limit) {
    return definitions.tailMap(afterName, false).values().stream().limit(limit).toList();
  }

  /** While true, reservations fail as an unreachable store's do. */
  public volatile boolean failReserves;

  @Override
  public IdRange reserve(SequenceDefinition d, int stripe, long size) {
    reserveCalls.incrementAndGet();
    if (failReserves) {
      throw new StoreUnavailableException("in-memory store: reservations fail (test)");
    }
    beforeReserve(d, stripe, size);
    synchronized (this) {
      requestedSizes.add(size);
      long[] r = reserved.get(d.name());
      if (r == null) {
        throw new SequenceNotFoundException("sequence '" + d.name() + "' does not exist");
      }
      java.util.ArrayDeque<IdRange> back = returned.get(d.name() + "/" + stripe);
      if (back != null && !back.isEmpty()) {
        IdRange first = back.pollFirst();
        if (first.count() > size) {
          back.addFirst(first.tail(size));
          return first.head(size);
        }
        return first;
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

  private final Map<String, java.util.ArrayDeque<IdRange>> returned = new HashMap<>();
  /** IDs given back, ever. */
  public long givenBack;

  @Override
  public synchronized long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
    java.util.ArrayDeque<IdRange> back = returned.computeIfAbsent(d.name() + "/" + stripe, k -> new java.util.ArrayDeque<>());
    long n = 0;
    for (IdRange r : ranges) {
      back.addLast(r);
      n += r.count();
    }
    givenBack += n;
    notifyAll();
    return n;
  }

  /** Waits until more than {@code ids} IDs were given back, ever, at most {@code max}; whether they were. */
  public synchronized boolean awaitGivenBackAbove(long ids, Duration max) throws InterruptedException {
    long end = System.nanoTime() + max.toNanos();
    while (givenBack <= ids) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** A hook for tests: runs before each reservation, outside the lock (may block or throw). */
  protected void beforeReserve(SequenceDefinition d, int stripe, long size) {}

  @Override
  public synchronized AdvanceReceipt advance(SequenceDefinition d, long floor) {
    long[] r = reserved.get(d.name());
    for (int k = 0; k < r.length; k++) {
      r[k] = Math.max(r[k], d.firstIndexAbove(k, floor));
    }
    floorLog.add(new FloorLog.Change(floorLog.size() + 1, d.name(), floor));
    return refresh.isZero() ? AdvanceReceipt.NONE : new AdvanceReceipt(Map.of("local", (long) floorLog.size()));
  }

  // ---- sharing between allocators: a floor log and announcements, as a store of many processes has.

  private final List<FloorLog.Change> floorLog = new ArrayList<>();
  private final Map<String, long[]> announcements = new HashMap<>(); // server -> {applied, expiresAtNanos}
  private Duration refresh = Duration.ZERO;

  /** Makes this store one that several allocators share, each syncing floors every {@code interval}. */
  public synchronized InMemoryRangeStore shared(Duration interval) {
    this.refresh = interval;
    return this;
  }

  @Override
  public synchronized Duration floorRefreshInterval() {
    return refresh;
  }

  /** While true, the floor log and announcements fail as an unreachable store does. */
  public volatile boolean storeDown;

  @Override
  public synchronized FloorLog floorLog(long afterVersion) {
    if (storeDown) {
      throw new StoreUnavailableException("in-memory store is down (test)");
    }
    List<FloorLog.Change> after = floorLog.stream().filter(c -> c.version() > afterVersion).toList();
    return new FloorLog(Math.max(afterVersion, floorLog.size()), after, true);
  }

  @Override
  public synchronized void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {
    announcements.put(server, new long[] {appliedVersion, System.nanoTime() + lease.toNanos(), -1});
  }

  /** Announcements record the client leases outstanding as said (-1: not said), returned as they are. */
  @Override
  public synchronized void announce(String server, UUID incarnation, long appliedVersion, Duration lease,
      Duration leasesOutstanding) {
    announcements.put(server, new long[] {appliedVersion, System.nanoTime() + lease.toNanos(),
        leasesOutstanding.toNanos()});
  }

  @Override
  public synchronized Confirmations confirmations(AdvanceReceipt receipt) {
    long longest = 0;
    boolean unknown = false;
    for (long[] a : announcements.values()) {
      if (a[1] - System.nanoTime() > 0) {
        unknown |= a[2] < 0;
        longest = Math.max(longest, a[2]);
      }
    }
    return new Confirmations(unconfirmed(receipt), unknown ? Optional.empty() : Optional.of(Duration.ofNanos(longest)));
  }

  @Override
  public synchronized void withdraw(String server, UUID incarnation) {
    announcements.remove(server);
  }

  @Override
  public synchronized List<String> unconfirmed(AdvanceReceipt receipt) {
    Long version = receipt.versions().get("local");
    List<String> out = new ArrayList<>();
    announcements.forEach((server, a) -> {
      if (version != null && a[0] < version && a[1] - System.nanoTime() > 0) {
        out.add("local/" + server);
      }
    });
    return out;
  }

  @Override
  public synchronized long floor(SequenceDefinition d) {
    return floorLog.stream().filter(c -> c.sequence().equals(d.name())).mapToLong(FloorLog.Change::floor)
        .max().orElse(Long.MIN_VALUE);
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

  // ---- strict sequences: owner rows and the pool's fence, as a shared store keeps them.

  private final Map<String, OwnerRecord> owners = new HashMap<>();
  private final Map<String, Long> fences = new HashMap<>();

  @Override
  public IdRange reserveStrict(SequenceDefinition d, long epoch, long size) {
    synchronized (this) {
      long fenced = fences.getOrDefault(d.name(), 0L);
      if (fenced > epoch) {
        throw new NotOwnerException(d.name(), null, Duration.ZERO, "epoch " + epoch + " superseded by " + fenced);
      }
      fences.put(d.name(), epoch);
    }
    return reserve(d, 0, size);
  }

  @Override
  public synchronized Optional<OwnerRecord> owner(SequenceDefinition d) {
    if (storeDown) {
      throw new StoreUnavailableException("in-memory store is down (test)");
    }
    return Optional.ofNullable(owners.get(d.name()));
  }

  @Override
  public synchronized boolean replaceOwner(SequenceDefinition d, OwnerRecord expected, OwnerRecord next) {
    if (storeDown) {
      throw new StoreUnavailableException("in-memory store is down (test)");
    }
    if (!java.util.Objects.equals(owners.get(d.name()), expected)) {
      return false;
    }
    owners.put(d.name(), next);
    return true;
  }

  @Override
  public String datacenter() {
    return "local";
  }

  @Override
  public void close() {}
}
