package dev.idgen.core;

/** No sequence of that name exists. Sequences are only ever created explicitly, so that a typo cannot start a new sequence at 1. */
public final class SequenceNotFoundException extends IdGenException {
  private static final long serialVersionUID = 1L;

  public SequenceNotFoundException(String message) {
    super(message);
  }

  public SequenceNotFoundException(String message, Throwable cause) {
    super(message, cause);
  }
}
