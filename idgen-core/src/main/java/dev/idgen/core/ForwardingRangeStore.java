package dev.idgen.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * A {@link RangeStore} that forwards every call to another one, for decorators (metrics, fault injection)
 * that override what they change: a method added to {@link RangeStore} is forwarded here once, so no
 * decorator silently falls back to a default. Thread-safe if the delegate is. {@link #close} does not
 * close the delegate (decorators do not own it); override it where they do.
 */
public abstract class ForwardingRangeStore implements RangeStore {
  private final RangeStore delegate;

  protected ForwardingRangeStore(RangeStore delegate) {
    this.delegate = delegate;
  }

  /** The store calls are forwarded to. */
  protected RangeStore delegate() {
    return delegate;
  }

  @Override
  public CompletionStage<Void> ready() {
    return delegate.ready();
  }

  @Override
  public void create(SequenceDefinition definition) {
    delegate.create(definition);
  }

  @Override
  public IdRange reserveStrict(SequenceDefinition sequence, long epoch, long size) {
    return delegate.reserveStrict(sequence, epoch, size);
  }

  @Override
  public Optional<OwnerRecord> owner(SequenceDefinition sequence) {
    return delegate.owner(sequence);
  }

  @Override
  public boolean replaceOwner(SequenceDefinition sequence, @javax.annotation.Nullable OwnerRecord expected,
      OwnerRecord next) {
    return delegate.replaceOwner(sequence, expected, next);
  }

  @Override
  public String datacenter() {
    return delegate.datacenter();
  }

  @Override
  public Optional<SequenceDefinition> find(String name) {
    return delegate.find(name);
  }

  @Override
  public List<SequenceDefinition> list(String afterName, int limit) {
    return delegate.list(afterName, limit);
  }

  @Override
  public Optional<StoredSequence> findStored(String name) {
    return delegate.findStored(name);
  }

  @Override
  public Optional<StoredSequence> findCurrent(String name) {
    return delegate.findCurrent(name);
  }

  @Override
  public AdvanceReceipt redefine(StoredSequence expected, StoredSequence next) {
    return delegate.redefine(expected, next);
  }

  @Override
  public List<StoredSequence> listStored(String afterName, int limit) {
    return delegate.listStored(afterName, limit);
  }

  @Override
  public IdRange reserve(SequenceDefinition sequence, int stripe, long size) {
    return delegate.reserve(sequence, stripe, size);
  }

  @Override
  public AdvanceReceipt advance(SequenceDefinition sequence, long floor) {
    return delegate.advance(sequence, floor);
  }

  @Override
  public long floor(SequenceDefinition sequence) {
    return delegate.floor(sequence);
  }

  @Override
  public FloorLog floorLog(long afterVersion) {
    return delegate.floorLog(afterVersion);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {
    delegate.announce(server, incarnation, appliedVersion, lease);
  }

  @Override
  public void withdraw(String server, UUID incarnation) {
    delegate.withdraw(server, incarnation);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease,
      Duration leasesOutstanding) {
    delegate.announce(server, incarnation, appliedVersion, lease, leasesOutstanding);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease, Duration keep,
      Duration leasesOutstanding) {
    delegate.announce(server, incarnation, appliedVersion, lease, keep, leasesOutstanding);
  }

  @Override
  public Confirmations confirmations(AdvanceReceipt receipt) {
    return delegate.confirmations(receipt);
  }

  @Override
  public List<String> unconfirmed(AdvanceReceipt receipt) {
    return delegate.unconfirmed(receipt);
  }

  @Override
  public Duration floorRefreshInterval() {
    return delegate.floorRefreshInterval();
  }

  @Override
  public long giveBack(SequenceDefinition sequence, int stripe, List<IdRange> ranges) {
    return delegate.giveBack(sequence, stripe, ranges);
  }

  @Override
  public SequenceState state(SequenceDefinition sequence) {
    return delegate.state(sequence);
  }

  @Override
  public SequenceState approximateState(SequenceDefinition sequence) {
    return delegate.approximateState(sequence);
  }

  /** Does not close the delegate. */
  @Override
  public void close() {}

  @Override
  public Reservation reserveRange(SequenceDefinition sequence, long count, String requestId, String reservedBy) {
    return delegate.reserveRange(sequence, count, requestId, reservedBy);
  }

  @Override
  public List<Reservation> reservations(SequenceDefinition sequence, long afterFirst, int limit) {
    return delegate.reservations(sequence, afterFirst, limit);
  }
}
