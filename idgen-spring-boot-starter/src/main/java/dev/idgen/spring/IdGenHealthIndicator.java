package dev.idgen.spring;

import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * {@code idgen} in {@code /actuator/health}: from the last {@code Allocate} call to each server and for each
 * sequence ({@link IdGenCallOutcomes}), and the counters of the configured sources.
 *
 * <ul>
 *   <li>DOWN when no server was reached by its last call (all answered UNAVAILABLE or timed out), or when a
 *       sequence's last call was refused with a status retrying does not fix (NOT_FOUND, PERMISSION_DENIED,
 *       exhausted...): its callers fail.
 *   <li>UNKNOWN before the first call ended.
 *   <li>UP otherwise: some server answers; the client fails over to it.
 * </ul>
 *
 * <p>Details: {@code servers} (each server's last outcome, {@code reachable} of them), {@code failedSources}
 * (sequences whose last call failed, with the status), and per configured source its {@code stats}.
 * Never calls a server itself. Thread-safe: reads snapshots.
 */
public class IdGenHealthIndicator extends AbstractHealthIndicator {
  private final IdGenCallOutcomes outcomes;
  private final List<IdSource> sources;

  /**
   * Creates the indicator.
   *
   * @param outcomes the client's call outcomes
   * @param sources the sources to show counters of
   */
  public IdGenHealthIndicator(IdGenCallOutcomes outcomes, List<IdSource> sources) {
    super("idgen health check failed");
    this.outcomes = outcomes;
    this.sources = List.copyOf(sources);
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    Map<String, IdGenCallOutcomes.Outcome> servers = outcomes.servers();
    Map<String, String> serverDetails = new LinkedHashMap<>();
    long reachable = 0;
    for (Map.Entry<String, IdGenCallOutcomes.Outcome> e : servers.entrySet()) {
      serverDetails.put(e.getKey(), e.getValue().toString());
      reachable += e.getValue().reached() ? 1 : 0;
    }
    Map<String, String> failed = new LinkedHashMap<>();
    boolean refused = false;
    for (Map.Entry<String, IdGenCallOutcomes.Outcome> e : outcomes.sequences().entrySet()) {
      if (e.getValue().code() != io.grpc.Status.Code.OK) {
        failed.put(e.getKey(), e.getValue().toString());
        refused |= e.getValue().refused();
      }
    }
    if (servers.isEmpty()) {
      builder.unknown().withDetail("servers", "no Allocate call has ended yet");
    } else if (reachable == 0 || refused) {
      builder.down();
    } else {
      builder.up();
    }
    if (!servers.isEmpty()) {
      builder.withDetail("servers", serverDetails).withDetail("reachable", reachable);
    }
    builder.withDetail("failedSources", failed);
    Map<String, Map<String, Object>> stats = new LinkedHashMap<>();
    for (IdSource source : sources) {
      IdSourceStats s = source.stats();
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("idsServed", s.idsServed());
      m.put("idsHeld", s.idsHeld());
      m.put("leases", s.leases());
      m.put("waits", s.waits());
      m.put("failedCalls", s.failedCalls());
      m.put("strictOrdering", s.strictOrdering());
      stats.put(s.sequence(), m);
    }
    if (!stats.isEmpty()) {
      builder.withDetail("sources", stats);
    }
  }
}
