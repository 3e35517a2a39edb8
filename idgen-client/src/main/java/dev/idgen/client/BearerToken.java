package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * Call credentials that send {@code authorization: Bearer TOKEN}, what the servers' access rules accept
 * ({@code idgen.access.tokens}), with the token from a {@link Supplier} asked at every call.
 *
 * <p>The token is sent only over a connection with privacy and integrity (TLS, or an in-process
 * channel): on any other the call fails with {@code UNAUTHENTICATED} before anything is sent, since a
 * token sent in clear text is a token given away. The supplier runs on gRPC's application executor
 * (the client's executor), not on a transport thread, so reading a file there is fine.
 *
 * <p>Thread-safe: immutable; the suppliers this package makes ({@link TokenFile}) are thread-safe.
 */
@ThreadSafe
final class BearerToken extends CallCredentials {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  /** Visible ASCII: what an HTTP/2 header value can carry without escaping, and no spaces. */
  private static final Pattern TOKEN = Pattern.compile("[\\x21-\\x7e]+");

  private final Supplier<String> token;
  private final String source;

  /**
   * @param token asked at every call; returns the token, or throws to fail the call
   * @param source where the token comes from, for messages (never the token itself)
   */
  BearerToken(Supplier<String> token, String source) {
    this.token = Objects.requireNonNull(token, "token");
    this.source = source;
  }

  /** Checks a token: non-empty visible ASCII without spaces; returns it. */
  static String check(String token, String source) {
    if (token == null || !TOKEN.matcher(token).matches()) {
      throw new IllegalArgumentException("bearer token from " + source + ": "
          + (token == null || token.isEmpty() ? "empty" : "not a token")
          + " (expected: visible ASCII characters without spaces)");
    }
    return token;
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor appExecutor, MetadataApplier applier) {
    if (info.getSecurityLevel() != SecurityLevel.PRIVACY_AND_INTEGRITY) {
      applier.fail(Status.UNAUTHENTICATED.withDescription("not sending the bearer token (" + source
          + ") to " + info.getAuthority() + " over a connection without TLS; use TLS, or callCredentials(...)"
          + " with credentials that decide for themselves"));
      return;
    }
    appExecutor.execute(() -> {
      String value;
      try {
        value = check(token.get(), source);
      } catch (RuntimeException e) {
        applier.fail(Status.UNAUTHENTICATED.withDescription("no bearer token: " + e.getMessage()).withCause(e));
        return;
      }
      Metadata headers = new Metadata();
      headers.put(AUTHORIZATION, "Bearer " + value);
      applier.apply(headers);
    });
  }

  @Override
  public String toString() {
    return "BearerToken{" + source + "}";
  }

  /**
   * A token kept in a file (a mounted secret), read again whenever the file changes: its modification
   * time, size or identity (a Kubernetes secret update swaps a symbolic link to a new file). The file is
   * looked at on every call, one {@code stat}: lease requests are seconds apart, and a rotated token is
   * then sent from the very next call. Surrounding whitespace (a trailing newline) is ignored.
   *
   * <p>A file that cannot be read, or is empty, after a token was read keeps the previous token (a
   * rotation caught half-way; the server refuses it if it is really stale) and logs a warning once per
   * distinct failure; before any token was read, the call fails.
   *
   * <p>Thread-safe: {@link #get()} is synchronized (calls are seconds apart; no contention to speak of).
   */
  @ThreadSafe
  static final class TokenFile implements Supplier<String> {
    private static final Logger logger = Logger.getLogger(TokenFile.class.getName());

    private final Path file;
    @GuardedBy("this") private String token;
    @GuardedBy("this") private BasicFileAttributes readAt;
    @GuardedBy("this") private String lastFailure;

    TokenFile(Path file) {
      this.file = Objects.requireNonNull(file, "file");
    }

    @Override
    public synchronized String get() {
      try {
        BasicFileAttributes now = Files.readAttributes(file, BasicFileAttributes.class);
        if (token == null || changed(readAt, now)) {
          String read = check(Files.readString(file, StandardCharsets.US_ASCII).strip(), file.toString());
          token = read;
          readAt = now;
          lastFailure = null;
        }
        return token;
      } catch (IOException | RuntimeException e) {
        String failure = "cannot use the token file " + file + ": " + e;
        if (token == null) {
          throw new IllegalStateException(failure, e);
        }
        if (!failure.equals(lastFailure)) {
          lastFailure = failure;
          logger.log(Level.WARNING, "{0}; sending the token read before", failure);
        }
        return token;
      }
    }

    private static boolean changed(BasicFileAttributes before, BasicFileAttributes now) {
      return !now.lastModifiedTime().equals(before.lastModifiedTime()) || now.size() != before.size()
          || !Objects.equals(now.fileKey(), before.fileKey());
    }

    @Override
    public String toString() {
      return "file " + file;
    }
  }
}
