package dev.idgen.core;

/** The store cannot be reached (or did not answer in time) and no reserve is left to serve from. Nothing was handed out; the operation may be retried. */
public final class StoreUnavailableException extends IdGenException {
  private static final long serialVersionUID = 1L;

  public StoreUnavailableException(String message) {
    super(message);
  }

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
