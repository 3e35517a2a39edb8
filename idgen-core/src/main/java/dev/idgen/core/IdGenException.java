package dev.idgen.core;

/**
 * The root of idgen's exceptions. Unchecked, like the Cassandra driver's {@code DriverException}: each
 * subclass stands for one outcome a caller can act on, and the server maps each to exactly one gRPC
 * status in one place. {@link IllegalArgumentException} and {@link IllegalStateException} remain for
 * programming errors only.
 */
public abstract class IdGenException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  protected IdGenException(String message) {
    super(message);
  }

  protected IdGenException(String message, Throwable cause) {
    super(message, cause);
  }
}
