package dev.idgen.server.http;

import com.google.errorprone.annotations.Immutable;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;

/**
 * {@code idgen.http}: where HTTP/JSON listens. Port 0 turns it off; -1 picks a free port (logged at start,
 * what tests use). TLS is the gRPC port's ({@code idgen.grpc.tls}): one certificate for both.
 */
@Immutable
public record HttpSettings(String host, int port) {

  public static final String HOST = "idgen.http.host";
  public static final String PORT = "idgen.http.port";

  /** The port value that turns HTTP/JSON off. */
  public static final int OFF = 0;
  /** The port value that asks for any free port. */
  public static final int ANY_FREE_PORT = -1;

  /** Whether HTTP/JSON is served. */
  public boolean enabled() {
    return port != OFF;
  }

  /**
   * Reads and checks the settings.
   *
   * @throws ConfigException naming the key, where it was set, and what was expected
   */
  public static HttpSettings from(Config config) {
    int port = config.getInt(PORT);
    if (port < ANY_FREE_PORT || port > 65535) {
      throw new ConfigException.BadValue(config.getValue(PORT).origin(), PORT,
          "expected 1 to 65535, 0 (HTTP/JSON off) or -1 (any free port), got " + port);
    }
    String host = config.getString(HOST);
    if (host.isBlank()) {
      throw new ConfigException.BadValue(config.getValue(HOST).origin(), HOST,
          "expected an address to bind, such as \"0.0.0.0\" or \"127.0.0.1\"");
    }
    return new HttpSettings(host, port);
  }
}
