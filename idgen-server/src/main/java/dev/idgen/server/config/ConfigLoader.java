package dev.idgen.server.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigOriginFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Builds the server's configuration from its layers, highest precedence first: system properties
 * ({@code -Didgen.grpc.port=…}), the {@code IDGEN_*} environment variables listed in
 * {@code environment.conf}, the {@code --config} file, and the defaults of {@code reference.conf}. Besides
 * {@code idgen}, the one root it holds is {@code datastax-java-driver}: the Cassandra driver's options as the
 * file or system properties set them (the driver's defaults are left out; the driver reads them itself).
 *
 * <p>The environment is a layer of its own rather than {@code ${?VAR}} lines in {@code reference.conf}:
 * there, a {@code --config} file would override the environment, while a container's environment must
 * win over a file baked into its image. The environment and the system properties are parameters, so
 * that tests need not mutate the process's.
 */
public final class ConfigLoader {

  private static final String ROOT = "idgen";
  /** The Cassandra driver's own options (idgen.cassandra's store passes the user's to it). */
  private static final String DRIVER_ROOT = "datastax-java-driver";
  private static final String ENVIRONMENT_LAYER = "dev/idgen/server/environment.conf";

  private ConfigLoader() {}

  /** The configuration of this process: its environment and system properties. */
  public static Config load(Optional<Path> file) {
    return load(file, System.getenv(), System.getProperties());
  }

  /**
   * Layers the configuration and checks that every key under {@code idgen} is one that
   * {@code reference.conf} documents.
   *
   * @throws ConfigException naming the file, the key and what is wrong
   */
  static Config load(Optional<Path> file, Map<String, String> environment, Properties systemProperties) {
    ClassLoader loader = ConfigLoader.class.getClassLoader();
    // The class path's reference.conf files include the Cassandra driver's: its defaults stay the driver's
    // (it reads them itself), so that datastax-java-driver here is only what the user set.
    Config reference = ConfigFactory.defaultReference(loader).withoutPath(DRIVER_ROOT);
    Config fileLayer = file.map(ConfigLoader::parseFile).orElse(ConfigFactory.empty());
    Config config = ConfigFactory.parseProperties(systemProperties)
        .withFallback(environmentLayer(loader, environment))
        .withFallback(fileLayer)
        .withFallback(reference)
        .resolve();
    checkKnownKeys(config, reference);
    return config;
  }

  private static Config parseFile(Path path) {
    if (!Files.isRegularFile(path)) {
      throw new ConfigException.IO(ConfigOriginFactory.newFile(path.toString()),
          "configuration file " + path + " does not exist or is not a regular file");
    }
    // allowMissing(false): a file that cannot be read fails instead of silently meaning "defaults".
    return ConfigFactory.parseFile(path.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
  }

  /** The {@code IDGEN_*} variables, resolved against {@code environment} alone. */
  private static Config environmentLayer(ClassLoader loader, Map<String, String> environment) {
    Map<String, String> idgenVariables = new TreeMap<>();
    // Only our prefix: other variables' names need not be valid HOCON paths.
    environment.forEach((name, value) -> {
      if (name.startsWith("IDGEN_")) {
        idgenVariables.put(name, value);
      }
    });
    Config unresolved = ConfigFactory.parseResources(loader, ENVIRONMENT_LAYER,
        ConfigParseOptions.defaults().setAllowMissing(false));
    return unresolved.resolveWith(ConfigFactory.parseMap(idgenVariables, "environment variables"),
        ConfigResolveOptions.defaults().setUseSystemEnvironment(false));
  }

  /** A map whose keys are the user's (datacenter names); only its values are checked, elsewhere. */
  private static final String OPEN_MAP = "idgen.cassandra.replication.";

  private static void checkKnownKeys(Config config, Config reference) {
    if (!config.hasPath(ROOT)) {
      return;
    }
    for (Map.Entry<String, ConfigValue> entry : config.getConfig(ROOT).entrySet()) {
      String key = ROOT + "." + entry.getKey();
      if (key.startsWith(OPEN_MAP)) {
        continue; // its keys are datacenter names, not settings
      }
      if (!reference.hasPath(key)) {
        throw new ConfigException.Generic(entry.getValue().origin().description() + ": unknown setting '"
            + key + "' (reference.conf lists every setting; is it misspelt?)");
      }
    }
  }
}
