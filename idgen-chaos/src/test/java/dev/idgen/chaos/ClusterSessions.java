package dev.idgen.chaos;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A test's own driver session to one datacenter of a chaos cluster (protocol V4, as the servers pin it). */
final class ClusterSessions {
  private ClusterSessions() {}

  static CqlSession session(CassandraCluster cluster, String dc) {
    List<InetSocketAddress> contacts = new ArrayList<>();
    for (String node : cluster.nodes(dc)) {
      contacts.add(new InetSocketAddress(cluster.address(node), 9042));
    }
    return CqlSession.builder().addContactPoints(contacts).withLocalDatacenter(dc)
        .withConfigLoader(DriverConfigLoader.programmaticBuilder()
            .withString(DefaultDriverOption.PROTOCOL_VERSION, "V4")
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
            .build())
        .build();
  }
}
