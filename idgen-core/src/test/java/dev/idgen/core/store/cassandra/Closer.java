package dev.idgen.core.store.cassandra;

import java.util.ArrayList;
import java.util.List;

/**
 * What one test opened (stores, allocators), closed after it in the reverse order: an allocator before the
 * store under it. A test's own field ({@code @AutoClose}); not thread-safe, a test adds from its own thread.
 */
final class Closer implements AutoCloseable {
  private final List<AutoCloseable> opened = new ArrayList<>();

  /** Closes {@code c} after the test, before whatever was added earlier; returns it. */
  <T extends AutoCloseable> T add(T c) {
    opened.add(c);
    return c;
  }

  @Override
  public void close() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    opened.clear();
  }
}
