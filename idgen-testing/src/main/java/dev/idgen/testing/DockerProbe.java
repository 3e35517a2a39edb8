package dev.idgen.testing;

import dev.idgen.testing.BackendSelection.DockerStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import org.testcontainers.DockerClientFactory;

/**
 * Asks Testcontainers whether a Docker engine answers ({@link DockerClientFactory#isDockerAvailable()}:
 * DOCKER_HOST, ~/.testcontainers.properties, the usual sockets). Without one it logs an ERROR line
 * ("Could not find a valid Docker environment") and answers false after about 0.4 s; a docker client
 * without a daemon counts as no engine.
 */
final class DockerProbe {
  private DockerProbe() {}

  static DockerStatus probe() {
    try {
      DockerClientFactory factory = DockerClientFactory.instance();
      if (factory.isDockerAvailable()) {
        return new DockerStatus(true, "Testcontainers reaches " + factory.getTransportConfig().getDockerHost());
      }
      return new DockerStatus(false, "Testcontainers found none; " + hints());
    } catch (RuntimeException | LinkageError e) {
      return new DockerStatus(false, "Testcontainers' probe failed (" + e + "); " + hints());
    }
  }

  private static String hints() {
    String host = System.getenv("DOCKER_HOST");
    return "DOCKER_HOST " + (host == null ? "unset" : "=" + host) + ", /var/run/docker.sock "
        + (Files.exists(Path.of("/var/run/docker.sock")) ? "present but not answering" : "absent");
  }
}
