package dev.idgen.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The server's version, written into {@code version.properties} by the build. */
final class Versions {

  private static final String RESOURCE = "/dev/idgen/server/version.properties";

  private Versions() {}

  static String server() {
    Properties properties = new Properties();
    try (InputStream in = Versions.class.getResourceAsStream(RESOURCE)) {
      if (in != null) {
        properties.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return properties.getProperty("version", "unknown");
  }
}
