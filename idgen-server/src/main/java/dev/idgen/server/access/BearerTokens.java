package dev.idgen.server.access;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.PeriodicTask;
import dev.idgen.server.lifecycle.ServerComponent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bearer tokens of {@code idgen.access.tokens}, as SHA-256 digests, with token files reloaded when they
 * change (a rotated secret). Every {@code token-refresh-interval} each file is read again; a new token
 * replaces its identity's old one, which is refused from then on. A file that cannot be used (unreadable,
 * shorter than 16 characters, another identity's token) is logged, and the identity keeps its previous
 * token. Inline and environment tokens never change. Tokens are never logged.
 *
 * <p>Thread-safe: {@link #identity} reads an immutable map through a volatile field; checks run on one
 * daemon thread, or a test's, under {@code lock}.
 */
@ThreadSafe
final class BearerTokens implements ServerComponent {
  private static final Logger log = LoggerFactory.getLogger(BearerTokens.class);

  private final OperationsSettings.Access settings;
  private final Object lock = new Object();

  /** Digest → identity. Replaced, never changed. */
  private volatile Map<String, String> digests;

  @GuardedBy("lock")
  private final Map<Path, String> fileDigests = new HashMap<>();

  @GuardedBy("lock")
  private PeriodicTask scheduler;

  BearerTokens(OperationsSettings.Access settings) {
    this.settings = settings;
    this.digests = settings.tokenDigests();
    synchronized (lock) {
      for (Map.Entry<Path, String> file : settings.tokenFiles().entrySet()) {
        String identity = file.getValue();
        settings.tokenDigests().forEach((digest, owner) -> {
          if (owner.equals(identity)) {
            fileDigests.put(file.getKey(), digest); // read at start by OperationsSettings
          }
        });
      }
    }
  }

  /** The identity a token stands for, or null. */
  String identity(String token) {
    return digests.get(OperationsSettings.sha256(token));
  }

  @Override
  public void start() {
    if (settings.tokenFiles().isEmpty()) {
      return;
    }
    synchronized (lock) {
      scheduler = PeriodicTask.every(settings.tokenRefreshInterval(), "idgen-token-reload", this::checkQuietly);
    }
  }

  private void checkQuietly() {
    try {
      check();
    } catch (RuntimeException e) {
      log.warn("tokens=reload_failed error={}", e.toString());
    }
  }

  /** Reads every token file again and applies what changed. Returns how many tokens were replaced. */
  int check() {
    synchronized (lock) {
      Map<String, String> next = new HashMap<>(digests);
      int replaced = 0;
      for (Map.Entry<Path, String> file : settings.tokenFiles().entrySet()) {
        Path path = file.getKey();
        String identity = file.getValue();
        String token;
        try {
          token = Files.readString(path, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
          log.warn("tokens=reload_failed identity={} file={} error={}", identity, path, e.toString());
          continue;
        }
        String digest = OperationsSettings.sha256(token);
        String old = fileDigests.get(path);
        if (digest.equals(old)) {
          continue;
        }
        if (token.length() < 16) {
          log.warn("tokens=reload_failed identity={} file={} error=shorter than 16 characters", identity, path);
          continue;
        }
        String owner = next.get(digest);
        if (owner != null && !owner.equals(identity)) {
          log.warn("tokens=reload_failed identity={} file={} error=the token of identity '{}'", identity, path,
              owner);
          continue;
        }
        if (old != null) {
          next.remove(old);
        }
        next.put(digest, identity);
        fileDigests.put(path, digest);
        replaced++;
        log.info("tokens=reloaded identity={} file={}", identity, path);
      }
      if (replaced > 0) {
        digests = Map.copyOf(next);
      }
      return replaced;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      PeriodicTask.closeIfStarted(scheduler);
    }
  }

  @Override
  public String toString() {
    return "bearer tokens";
  }
}
