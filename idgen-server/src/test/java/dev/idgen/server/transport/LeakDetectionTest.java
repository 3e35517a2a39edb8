package dev.idgen.server.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import io.grpc.InsecureServerCredentials;
import io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector;
import io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class LeakDetectionTest {
  private Level levelBefore;
  private String propertyBefore;

  @BeforeEach
  void remember() {
    levelBefore = ResourceLeakDetector.getLevel();
    propertyBefore = System.getProperty(LeakDetection.LEVEL_PROPERTY);
  }

  @AfterEach
  void restore() {
    ResourceLeakDetector.setLevel(levelBefore);
    if (propertyBefore == null) {
      System.clearProperty(LeakDetection.LEVEL_PROPERTY);
    } else {
      System.setProperty(LeakDetection.LEVEL_PROPERTY, propertyBefore);
    }
  }

  @Test
  void should_turn_the_detector_off_when_no_level_was_asked_for() {
    System.clearProperty(LeakDetection.LEVEL_PROPERTY);
    ResourceLeakDetector.setLevel(Level.SIMPLE); // Netty's default

    LeakDetection.offUnlessAsked();

    assertThat(ResourceLeakDetector.getLevel()).isEqualTo(Level.DISABLED);
  }

  @Test
  void should_leave_the_level_its_property_asked_for() {
    System.setProperty(LeakDetection.LEVEL_PROPERTY, "paranoid");
    ResourceLeakDetector.setLevel(Level.PARANOID); // what Netty read from the property

    LeakDetection.offUnlessAsked();

    assertThat(ResourceLeakDetector.getLevel()).isEqualTo(Level.PARANOID);
  }

  @Test
  void should_turn_it_off_when_the_netty_server_is_built() {
    System.clearProperty(LeakDetection.LEVEL_PROPERTY);
    ResourceLeakDetector.setLevel(Level.SIMPLE);

    ServerTransport.netty().serverBuilder(ServerSettings.from(ConfigFactory.load()),
        OperationsSettings.from(ConfigFactory.load()).limits(), InsecureServerCredentials.create());

    assertThat(ResourceLeakDetector.getLevel()).isEqualTo(Level.DISABLED);
  }
}
