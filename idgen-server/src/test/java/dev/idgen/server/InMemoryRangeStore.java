package dev.idgen.server;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.IdRange;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.SequenceState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A non-durable {@link RangeStore} for the server's unit tests: plain maps under one lock, so that it is
 * obviously correct. It proves nothing about a real store.
 *
 * <p>{@link #hook} runs first in every method, outside the lock, with the method's name: tests make it
 * throw (an unreachable store) or block (a slow one).
 */
@ThreadSafe
public final class InMemoryRangeStore implements RangeStore {

  /** Runs before each operation ("create", "find", "list", "reserve", "advance", "state"). */
  @FunctionalInterface
  public interface Hook {
    void before(String operation);
  }

  public volatile Hook hook = operation -> {};

  /** Runs before each reservation, after {@link #hook}, with the sequence's name: to stall one sequence. */
  public volatile java.util.function.Consumer<String> beforeReserve = name -> {};

  @GuardedBy("this")
  private final TreeMap<String, SequenceDefinition> definitions = new TreeMap<>();

  /** Per sequence and stripe: how many of the stripe's IDs are reserved (the next index). */
  @GuardedBy("this")
  private final Map<String, long[]> reserved = new HashMap<>();

  @Override
  public void create(SequenceDefinition definition) {
    hook.before("create");
    synchronized (this) {
      if (definitions.containsKey(definition.name())) {
        throw new SequenceAlreadyExistsException("sequence '" + definition.name() + "' already exists");
      }
      definitions.put(definition.name(), definition);
      reserved.put(definition.name(), new long[definition.stripes()]);
    }
  }

  @Override
  public Optional<SequenceDefinition> find(String name) {
    hook.before("find");
    synchronized (this) {
      return Optional.ofNullable(definitions.get(name));
    }
  }

  @Override
  public List<SequenceDefinition> list(String afterName, int limit) {
    hook.before("list");
    synchronized (this) {
      return List.copyOf(definitions.tailMap(afterName, false).values().stream().limit(limit).toList());
    }
  }

  @Override
  public IdRange reserve(SequenceDefinition sequence, int stripe, long size) {
    hook.before("reserve");
    beforeReserve.accept(sequence.name());
    synchronized (this) {
      long[] next = stripes(sequence);
      long total = sequence.stripeSize(stripe);
      if (next[stripe] >= total) {
        throw new SequenceExhaustedException(sequence.name(), sequence.max());
      }
      long from = next[stripe];
      long to = Math.min(total, from + size);
      next[stripe] = to;
      return sequence.range(stripe, from, to);
    }
  }

  @Override
  public AdvanceReceipt advance(SequenceDefinition sequence, long floor) {
    hook.before("advance");
    synchronized (this) {
      long[] next = stripes(sequence);
      for (int k = 0; k < next.length; k++) {
        next[k] = Math.max(next[k], sequence.firstIndexAbove(k, floor)); // never moves back
      }
    }
    return AdvanceReceipt.NONE; // one process: nothing for other servers to confirm
  }

  @Override
  public SequenceState state(SequenceDefinition sequence) {
    hook.before("state");
    synchronized (this) {
      long[] next = stripes(sequence);
      List<SequenceState.Stripe> states = new ArrayList<>();
      for (int k = 0; k < next.length; k++) {
        states.add(new SequenceState.Stripe(k, next[k], sequence.stripeSize(k)));
      }
      return new SequenceState(states, List.of());
    }
  }

  // ---- strict sequences: owner rows and the pool's fence, as a shared store keeps them.

  @GuardedBy("this") private final Map<String, OwnerRecord> owners = new HashMap<>();
  @GuardedBy("this") private final Map<String, Long> fences = new HashMap<>();

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
    return Optional.ofNullable(owners.get(d.name()));
  }

  @Override
  public synchronized boolean replaceOwner(SequenceDefinition d, OwnerRecord expected, OwnerRecord next) {
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

  @GuardedBy("this")
  private long[] stripes(SequenceDefinition sequence) {
    long[] next = reserved.get(sequence.name());
    if (next == null) {
      throw new SequenceNotFoundException("sequence '" + sequence.name() + "' does not exist");
    }
    return next;
  }
}
