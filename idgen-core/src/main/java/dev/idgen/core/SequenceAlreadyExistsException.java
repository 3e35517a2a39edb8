package dev.idgen.core;

/** A sequence of that name exists already, whatever its settings. */
public final class SequenceAlreadyExistsException extends IdGenException {
  private static final long serialVersionUID = 1L;

  public SequenceAlreadyExistsException(String message) {
    super(message);
  }

  public SequenceAlreadyExistsException(String message, Throwable cause) {
    super(message, cause);
  }
}
