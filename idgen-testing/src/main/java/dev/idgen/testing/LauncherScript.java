package dev.idgen.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.function.Function;

/**
 * Finds {@code cassandra.sh}, in this order:
 * <ol>
 *   <li>system property {@value #PROPERTY} (environment variable {@value #ENV}): the root pom's failsafe
 *       configuration sets it to {@code ${maven.multiModuleProjectDirectory}/idgen-testing/cassandra/cassandra.sh},
 *       so every module's integration tests run the checkout's copy; it must exist;
 *   <li>{@code idgen-testing/cassandra/cassandra.sh} in the working directory or one of its parents (an IDE
 *       running a test from a module directory);
 *   <li>the copy packaged in idgen-testing's jar ({@code dev/idgen/testing/cassandra/}), extracted with its
 *       {@code netns.sh} and {@code pom.xml} into a temporary directory (its fetch then uses {@code mvn} from
 *       the PATH unless the Cassandra jars are already in {@code ~/.cache/idgen-cassandra}).
 * </ol>
 */
final class LauncherScript {
  static final String PROPERTY = "idgen.it.cassandra.launcher";
  static final String ENV = "IDGEN_IT_CASSANDRA_LAUNCHER";
  static final String RELATIVE = "idgen-testing/cassandra/cassandra.sh";
  private static final String RESOURCE_DIR = "/dev/idgen/testing/cassandra/";

  /** The script and how it was found (for the messages). */
  record Located(Path script, String how) {}

  private LauncherScript() {}

  static Located locate() {
    return locate(System::getProperty, System::getenv, Path.of(System.getProperty("user.dir")));
  }

  static Located locate(Function<String, String> properties, Function<String, String> environment, Path workingDir) {
    String configured = properties.apply(PROPERTY);
    String source = "system property " + PROPERTY;
    if (configured == null || configured.isBlank()) {
      configured = environment.apply(ENV);
      source = "environment variable " + ENV;
    }
    if (configured != null && !configured.isBlank()) {
      Path p = Path.of(configured).toAbsolutePath().normalize();
      if (!Files.isRegularFile(p)) {
        throw new IllegalStateException(source + " names " + p + ", which does not exist");
      }
      return new Located(p, source);
    }
    for (Path dir = workingDir.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
      Path p = dir.resolve(RELATIVE);
      if (Files.isRegularFile(p)) {
        return new Located(p, "found above the working directory");
      }
    }
    return new Located(extract(), "extracted from idgen-testing's jar");
  }

  private static Path extract() {
    try {
      Path dir = Files.createTempDirectory("idgen-cassandra-launcher");
      dir.toFile().deleteOnExit();
      Path script = null;
      for (String name : new String[] {"cassandra.sh", "netns.sh", "pom.xml"}) {
        try (InputStream in = LauncherScript.class.getResourceAsStream(RESOURCE_DIR + name)) {
          if (in == null) {
            throw new IllegalStateException("idgen-testing's jar has no " + RESOURCE_DIR + name);
          }
          Path target = dir.resolve(name);
          Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
          target.toFile().deleteOnExit();
          if (name.endsWith(".sh")) {
            target.toFile().setExecutable(true);
          }
          if (name.equals("cassandra.sh")) {
            script = target;
          }
        }
      }
      return script;
    } catch (IOException e) {
      throw new UncheckedIOException("could not extract cassandra.sh from idgen-testing's jar", e);
    }
  }
}
