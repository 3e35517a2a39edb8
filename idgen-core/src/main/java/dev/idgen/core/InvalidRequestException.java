package dev.idgen.core;

import java.util.OptionalLong;

/**
 * A request that can never succeed as it stands: a malformed name, a count or setting out of range. The
 * message names the field and what was expected; {@link #field()} names the field for programs (the
 * server's error details), and {@link #limit()} the limit a count was above.
 */
public final class InvalidRequestException extends IdGenException {
  private static final long serialVersionUID = 1L;

  /** The request field at fault, as the API names it ({@code name}, {@code count}, ...); "" if none. */
  private final String field;
  /** The per-call limit a count exceeded; -1 otherwise. */
  private final long limit;

  public InvalidRequestException(String message) {
    this("", -1, message, null);
  }

  public InvalidRequestException(String message, Throwable cause) {
    this("", -1, message, cause);
  }

  private InvalidRequestException(String field, long limit, String message, Throwable cause) {
    super(message, cause);
    this.field = field;
    this.limit = limit;
  }

  /** About one field of the request, named as the API names it (e.g. {@code node_block_size}). */
  public static InvalidRequestException ofField(String field, String message) {
    return new InvalidRequestException(field, -1, message, null);
  }

  /** {@link #ofField} with the exception that made the value invalid. */
  public static InvalidRequestException ofField(String field, String message, Throwable cause) {
    return new InvalidRequestException(field, -1, message, cause);
  }

  /** An allocation's count below 1 or above the per-call limit {@code limit}. */
  public static InvalidRequestException count(String sequence, long count, long limit) {
    return new InvalidRequestException("count", count > limit ? limit : -1, "count " + count
        + " for sequence '" + sequence + "' (expected: 1 to " + limit + ", the per-call limit)", null);
  }

  /** A count below 1 or above {@code limit}, the setting {@code setting} (e.g. a reservation's). */
  public static InvalidRequestException count(String sequence, long count, long limit, String setting) {
    return new InvalidRequestException("count", count > limit ? limit : -1, "count " + count
        + " for sequence '" + sequence + "' (expected: 1 to " + limit + ", the server's " + setting + ")", null);
  }

  /** The request field at fault, as the API names it; empty if the exception is not about one field. */
  public String field() {
    return field;
  }

  /** For a count above the per-call limit, that limit; empty otherwise. */
  public OptionalLong limit() {
    return limit < 0 ? OptionalLong.empty() : OptionalLong.of(limit);
  }
}
