package dev.idgen.test;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.client.IdSource;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * In-memory sources by sequence name, for code that takes its sequences by name (as
 * {@code IdGenClient.sequence} gives them): each name gets its own {@link InMemoryIdSource}, created on
 * first use, starting at the same first ID.
 *
 * <pre>{@code
 * InMemoryIdSources ids = InMemoryIdSources.startingAt(1);
 * Billing billing = new Billing(ids::sequence);   // a Function<String, IdSource>
 * }</pre>
 *
 * <p>Unlike a client, it knows every name: a sequence the servers do not have fails there with
 * {@code NOT_FOUND}, never here. Test that with {@link IdgenDaemonTest}.
 *
 * <p>Threads: safe for any number. The sources live in a concurrent map, one instance per name; a source
 * created while {@link #close()} runs is closed too.
 */
@ThreadSafe
public final class InMemoryIdSources implements AutoCloseable {
  private final long first;
  private final ConcurrentMap<String, InMemoryIdSource> sources = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private InMemoryIdSources(long first) {
    if (first < 0) {
      throw new IllegalArgumentException("first: " + first + " (expected: >= 0, IDs are never negative)");
    }
    this.first = first;
  }

  /**
   * Returns an empty registry whose sources hand out {@code first}, {@code first + 1}, … each.
   *
   * @param first every sequence's first ID, {@code >= 0}
   * @return a new registry
   * @throws IllegalArgumentException if {@code first < 0}
   */
  public static InMemoryIdSources startingAt(long first) {
    return new InMemoryIdSources(first);
  }

  /**
   * Returns the source of {@code name}: the same instance for the same name, created on first use.
   *
   * @param name the sequence's name, as {@code IdGenClient.sequence} accepts it
   * @return the sequence's source
   * @throws IllegalArgumentException if the name is malformed
   * @throws IllegalStateException if the registry is closed and has no source of that name
   */
  public IdSource sequence(String name) {
    return source(name);
  }

  /**
   * Returns the source of {@code name} as its own type, for a test that closes it or reads its state.
   *
   * @param name the sequence's name, as {@code IdGenClient.sequence} accepts it
   * @return the sequence's source, the instance {@link #sequence(String)} returns
   * @throws IllegalArgumentException if the name is malformed
   * @throws IllegalStateException if the registry is closed and has no source of that name
   */
  public InMemoryIdSource source(String name) {
    InMemoryIdSource source = name == null ? null : sources.get(name);
    if (source != null) {
      return source;
    }
    checkOpen();
    InMemoryIdSource created = InMemoryIdSource.startingAt(name, first); // checks the name
    source = sources.putIfAbsent(name, created);
    if (source != null) {
      return source;
    }
    if (closed) {
      created.close(); // close() may have missed it
      checkOpen();
    }
    return created;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the InMemoryIdSources is closed");
    }
  }

  /**
   * Closes every source, as closing a client does: calls on them fail with reason {@code CLOSED}, and
   * asking for a new name throws {@link IllegalStateException}. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    sources.values().forEach(InMemoryIdSource::close);
  }
}
