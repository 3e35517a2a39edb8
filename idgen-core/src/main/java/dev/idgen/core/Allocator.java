package dev.idgen.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;

/** PLACEHOLDER — the lead engineer is writing the implementation; the public API below is final. */
public final class Allocator implements AutoCloseable {

  /** A builder over {@code store}, which the allocator does not close. */
  public static Builder builder(RangeStore store) {
    return new Builder(store);
  }

  /** Creates a sequence (durably, in the store). */
  public SequenceDefinition create(SequenceDefinition definition) {
    throw new UnsupportedOperationException();
  }

  /** The definition of a sequence; {@link SequenceNotFoundException} if it does not exist. */
  public SequenceDefinition definition(String name) {
    throw new UnsupportedOperationException();
  }

  /** Up to {@code limit} definitions in name order after {@code afterName} ("" for the first page). */
  public List<SequenceDefinition> list(String afterName, int limit) {
    throw new UnsupportedOperationException();
  }

  /**
   * Allocates exactly {@code count} new IDs of a sequence, as one or more ranges.
   *
   * @param timeout how long to wait, at most, for a reserve when none is left
   * @throws InvalidRequestException bad name, count < 1 or above {@link Builder#maxIdsPerCall}
   * @throws SequenceNotFoundException unknown sequence
   * @throws SequenceExhaustedException the sequence reached its max; carries the ranges delivered
   * @throws StoreUnavailableException no reserve left and the store unreachable, or the timeout passed
   */
  public List<IdRange> allocate(String sequence, long count, Duration timeout) {
    throw new UnsupportedOperationException();
  }

  /**
   * Moves a sequence past {@code floor}: once this returns, no range this allocator hands out holds an ID
   * at or below it. Returns the definition.
   */
  public SequenceDefinition advance(String sequence, long floor) {
    throw new UnsupportedOperationException();
  }

  /** The sequence's definition and live state (store and this process's reserve). */
  public SequenceView describe(String sequence) {
    throw new UnsupportedOperationException();
  }

  /** Stops refills; cached reserves are abandoned (a counted gap). Does not close the store. */
  @Override
  public void close() {}

  /** A sequence's definition with its store state and what this process holds in memory. */
  public record SequenceView(SequenceDefinition definition, SequenceState state, long serverReserve) {}

  /** Configures an {@link Allocator}. */
  public static final class Builder {
    private final RangeStore store;

    Builder(RangeStore store) {
      this.store = store;
    }

    /** The largest count one {@link #allocate} call may ask for. Default 1,000,000. */
    public Builder maxIdsPerCall(long max) {
      return this;
    }

    /** Where refills run. Default: a daemon thread pool owned (and shut down) by the allocator. */
    public Builder executor(Executor executor) {
      return this;
    }

    /** The time source for rate estimates. Default {@link Ticker#system()}. */
    public Builder ticker(Ticker ticker) {
      return this;
    }

    /** How long a node's reserve should last at its observed rate. Default 60 s. */
    public Builder targetRunway(Duration runway) {
      return this;
    }

    /** The smallest block a node reserves (the sequence's node_block_size caps it). Default 100. */
    public Builder minNodeBlock(long min) {
      return this;
    }

    /** Refill when less than this fraction of a block is left. Default 0.5. */
    public Builder refillThreshold(double fraction) {
      return this;
    }

    public Allocator build() {
      return new Allocator();
    }
  }
}
