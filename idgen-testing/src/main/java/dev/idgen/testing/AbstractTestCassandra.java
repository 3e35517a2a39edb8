package dev.idgen.testing;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Contact points, datacenter checks and paused-node bookkeeping shared by the backends. */
abstract class AbstractTestCassandra implements TestCassandra, AutoCloseable {
  private final Map<String, String> contactPoints = new LinkedHashMap<>();
  private final Set<String> paused = ConcurrentHashMap.newKeySet();
  /** The JVMs of the nodes, where this machine runs them (the launcher's); none for containers. */
  private final Map<String, Long> pids = new ConcurrentHashMap<>();

  /** Called once the nodes run (before the handle is published). */
  protected final void contactPoints(String dc1, String dc2) {
    contactPoints.put(DC1, dc1);
    contactPoints.put(DC2, dc2);
  }

  @Override
  public final String contactPoint(String dc) {
    String cp = contactPoints.get(checkDc(dc));
    if (cp == null) {
      throw new IllegalStateException("Cassandra is not started");
    }
    return cp;
  }

  /** Records the pid of a node's JVM, for {@link #pid} and signals. */
  protected final void pid(String dc, long pid) {
    pids.put(checkDc(dc), pid);
  }

  @Override
  public OptionalLong pid(String dc) {
    Long pid = pids.get(checkDc(dc));
    return pid == null ? OptionalLong.empty() : OptionalLong.of(pid);
  }

  @Override
  public final synchronized void pause(String dc) {
    checkDc(dc);
    doPause(dc);
    paused.add(dc);
  }

  @Override
  public final synchronized void resume(String dc) {
    checkDc(dc);
    doResume(dc);
    paused.remove(dc);
  }

  @Override
  public final void resumeAll() {
    for (String dc : Set.copyOf(paused)) {
      try {
        resume(dc);
      } catch (RuntimeException e) {
        System.err.println("[idgen-testing] could not resume " + dc + ": " + e);
      }
    }
  }

  @Override
  public String describe() {
    StringBuilder sb = new StringBuilder(backend().id());
    for (String dc : datacenters()) {
      sb.append(", ").append(dc).append('=').append(contactPoints.getOrDefault(dc, "-"));
      pid(dc).ifPresent(p -> sb.append(" (pid ").append(p).append(')'));
    }
    return sb.toString();
  }

  protected abstract void doPause(String dc);

  /** Must be idempotent: {@link #resume} calls it whether or not the node is paused. */
  protected abstract void doResume(String dc);

  /** Stops what this handle started; resumes paused nodes first. Never throws. */
  @Override
  public abstract void close();

  static String checkDc(String dc) {
    if (!DC1.equals(dc) && !DC2.equals(dc)) {
      throw new IllegalArgumentException("unknown datacenter '" + dc + "' (expected " + DC1 + " or " + DC2 + ")");
    }
    return dc;
  }

  @Override
  public String toString() {
    return describe();
  }
}
