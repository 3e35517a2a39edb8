package dev.idgen.core.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** The allocator's threads and log category, shared by its rooms so that none of them imports the allocator. */
public final class Daemons {
  /**
   * The allocator's logger name: lines of its rooms that were once its own log under it, and operators may
   * filter by it.
   */
  public static final String ALLOCATOR_LOG = "dev.idgen.core.Allocator";

  private Daemons() {}

  /** Daemon threads named {@code prefix} and a count, so that a thread dump says whose they are. */
  public static ThreadFactory threads(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
