package dev.idgen.core;

/** A request that can never succeed as it stands: a malformed name, a count or setting out of range. The message names the field and what was expected. */
public final class InvalidRequestException extends IdGenException {
  private static final long serialVersionUID = 1L;

  public InvalidRequestException(String message) {
    super(message);
  }

  public InvalidRequestException(String message, Throwable cause) {
    super(message, cause);
  }
}
