package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.Contents;
import java.io.PrintStream;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The servers' compare-and-set outcomes ({@code idgen_store_cas_total}), summed over tiers, servers and
 * incarnations read: each incarnation's counters, read just before its kill -9 or SIGTERM and at the end (a
 * killed process takes its counters along: what it counted after the last read is lost). Not a verdict.
 * Stateless.
 */
final class CasTotals {
  private CasTotals() {}

  /** The totals by outcome; prints them by tier, with how often they were read. */
  static Map<String, Long> sum(Contents run, PrintStream out) {
    Map<String, Long> cas = new TreeMap<>();
    Map<String, Long> casByTier = new TreeMap<>();
    long casAtKills = 0;
    long casAtEnd = 0;
    long casAtStops = 0;
    long casUnreachable = 0;
    for (RunLog.CasReport c : run.cas()) {
      if (c.counts() == null) {
        casUnreachable++;
        continue;
      }
      if (c.when().equals("kill")) {
        casAtKills++;
      } else if (c.when().equals("stop")) {
        casAtStops++;
      } else {
        casAtEnd++;
      }
      c.counts().forEach((k, v) -> {
        cas.merge(k.substring(k.indexOf(':') + 1), v, Long::sum);
        casByTier.merge(k, v, Long::sum);
      });
    }
    if (!run.cas().isEmpty()) {
      out.printf("cas by tier: %s (idgen_store_cas_total read %d times just before a kill -9%s and %d times at the "
          + "end, %d reads failed; what a killed incarnation counted after its last read died with it)%n",
          casByTier, casAtKills, casAtStops == 0 ? "" : ", " + casAtStops + " times just before a SIGTERM",
          casAtEnd, casUnreachable);
    }
    return Collections.unmodifiableMap(cas);
  }
}
