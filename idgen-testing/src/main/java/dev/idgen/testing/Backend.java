package dev.idgen.testing;

import java.util.Locale;

/** Where the integration tests' Cassandra comes from. */
public enum Backend {
  /** {@code idgen-testing/cassandra/cassandra.sh}: Cassandra 5.0.9 as local JVMs, 127.0.0.1 (dc1) and 127.0.0.2 (dc2). */
  LAUNCHER,
  /** Two {@code cassandra:5.0} containers on one Docker network, through Testcontainers. */
  TESTCONTAINERS,
  /** A cluster that is already running; contact points from {@code idgen.it.cassandra.dc1} / {@code .dc2}. */
  EXTERNAL;

  /** The name used in {@code idgen.it.cassandra=...} and in messages: {@code launcher}, {@code testcontainers}, {@code external}. */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The backend named {@code id} (case and surrounding blanks ignored). */
  public static Backend fromId(String id) {
    String v = id.trim().toLowerCase(Locale.ROOT);
    for (Backend b : values()) {
      if (b.id().equals(v)) {
        return b;
      }
    }
    throw new IllegalArgumentException(BackendSelection.PROPERTY + "='" + id
        + "': expected launcher, testcontainers or external");
  }
}
