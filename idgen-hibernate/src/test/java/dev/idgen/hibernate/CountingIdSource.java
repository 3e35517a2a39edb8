package dev.idgen.hibernate;

import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/** An {@link IdSource} that counts up from a first value, in memory: for the mapping tests only. */
final class CountingIdSource implements IdSource {
  private final String sequence;
  private final AtomicLong nextId;

  CountingIdSource(String sequence, long first) {
    this.sequence = sequence;
    this.nextId = new AtomicLong(first);
  }

  @Override
  public String sequence() {
    return sequence;
  }

  @Override
  public long next() {
    return nextId.getAndIncrement();
  }

  @Override
  public OptionalLong tryNext() {
    return OptionalLong.of(next());
  }

  @Override
  public CompletableFuture<Long> nextAsync() {
    return CompletableFuture.completedFuture(next());
  }

  @Override
  public long[] next(int count) {
    long[] ids = new long[count];
    fill(ids, 0, count);
    return ids;
  }

  @Override
  public void fill(long[] ids, int from, int to) {
    for (int i = from; i < to; i++) {
      ids[i] = next();
    }
  }

  @Override
  public IdSourceStats stats() {
    return IdSourceStats.builder(sequence).idsServed(nextId.get()).build();
  }
}
