package dev.idgen.testing;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Which {@link Backend} gives the integration tests their Cassandra: a pure function of the override
 * (system property {@value #PROPERTY}, else environment variable {@value #ENV}) and of whether a Docker
 * engine answers (asked only when there is no override).
 *
 * <ul>
 *   <li>override {@code launcher}, {@code testcontainers} or {@code external}: that backend, whatever Docker says;
 *   <li>any other override: an {@link IllegalArgumentException} (the tests then fail, they are not skipped);
 *   <li>no override, a Docker engine: {@link Backend#TESTCONTAINERS};
 *   <li>no override, no Docker engine: {@link Backend#LAUNCHER}.
 * </ul>
 */
public final class BackendSelection {
  /** The system property that overrides the choice. */
  public static final String PROPERTY = "idgen.it.cassandra";
  /** The environment variable that overrides the choice when the system property is not set. */
  public static final String ENV = "IDGEN_IT_CASSANDRA";

  /** What a Docker probe found; {@code detail} says where (available) or why not (unavailable). */
  public record DockerStatus(boolean available, String detail) {
    public DockerStatus {
      Objects.requireNonNull(detail, "detail");
    }
  }

  /** The backend and why, e.g. {@code launcher} because of {@code no Docker engine: ...}. */
  public record Choice(Backend backend, String reason) {
    public Choice {
      Objects.requireNonNull(backend, "backend");
      Objects.requireNonNull(reason, "reason");
    }

    /** The line printed once per test JVM. */
    public String describe() {
      return "[idgen-testing] Cassandra for integration tests: " + backend.id() + " (" + reason + ")";
    }
  }

  private BackendSelection() {}

  /**
   * The choice. {@code override} is the value of {@value #PROPERTY} / {@value #ENV} (null or blank: none);
   * {@code docker} is only called when there is no override.
   */
  public static Choice select(String override, Supplier<DockerStatus> docker) {
    if (override != null && !override.isBlank()) {
      Backend b = Backend.fromId(override);
      return new Choice(b, "chosen with " + PROPERTY + "=" + b.id());
    }
    DockerStatus status = docker.get();
    return status.available()
        ? new Choice(Backend.TESTCONTAINERS, "Docker engine found: " + status.detail())
        : new Choice(Backend.LAUNCHER, "no Docker engine: " + status.detail());
  }

  /** The override: the system property if set and not blank, else the environment variable, else null. */
  public static String override(Function<String, String> systemProperties, Function<String, String> environment) {
    String p = systemProperties.apply(PROPERTY);
    if (p != null && !p.isBlank()) {
      return p;
    }
    String e = environment.apply(ENV);
    return e != null && !e.isBlank() ? e : null;
  }

  /** The choice for this JVM: its system properties and environment, and Testcontainers' Docker probe. */
  static Choice forThisJvm() {
    return select(override(System::getProperty, System::getenv), DockerProbe::probe);
  }
}
