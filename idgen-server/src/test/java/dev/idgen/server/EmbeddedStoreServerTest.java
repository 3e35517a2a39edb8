package dev.idgen.server;

import static dev.idgen.server.TestServer.count;
import static dev.idgen.server.TestServer.ids;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.GetSequenceRequest;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The production store module under the in-process server: durable across a clean restart. */
class EmbeddedStoreServerTest {

  @TempDir
  Path dir;

  @Test
  void should_continue_above_every_id_handed_out_after_a_restart_on_the_same_directory() {
    List<Long> before;
    try (TestServer server = TestServer.startEmbedded(dir)) {
      server.create("orders");
      before = ids(server.allocate("orders", 25));
    }

    try (TestServer restarted = TestServer.startEmbedded(dir)) {
      List<Long> after = ids(restarted.allocate("orders", 25));

      assertThat(count(restarted.allocate("orders", 1))).isEqualTo(1);
      assertThat(Collections.min(after)).isGreaterThan(Collections.max(before));
      assertThat(Collections.min(after)).as("a graceful stop gave its reserve back: no gap")
          .isEqualTo(Collections.max(before) + 1);
      assertThat(restarted.admin().getSequence(GetSequenceRequest.newBuilder().setName("orders").build())
          .getName()).isEqualTo("orders");
    }
  }
}
