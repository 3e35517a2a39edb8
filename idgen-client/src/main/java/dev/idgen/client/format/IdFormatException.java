package dev.idgen.client.format;

import java.util.Objects;

/**
 * Why {@link IdFormat#parse} refused a text: it is not an ID that the format writes. Its message quotes the text
 * and says what was expected; {@link #reason()} tells the cases apart, for example to answer a mistyped ID
 * differently from a foreign one.
 */
public final class IdFormatException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** What is wrong with the text. */
  public enum Reason {
    /** It does not start with the format's prefix. */
    WRONG_PREFIX,
    /** After the prefix, it holds something other than the ASCII digits 0 to 9, or nothing. */
    NOT_DIGITS,
    /** It has fewer digits than the zero padding, or a leading zero beyond it. */
    WRONG_LENGTH,
    /** The check digit does not match the number: a digit was mistyped or two were swapped. */
    CHECK_FAILED,
    /** The number is above {@link Long#MAX_VALUE}, or outside the format's permutation's range. */
    OUT_OF_RANGE
  }

  private final Reason reason;

  IdFormatException(Reason reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /**
   * Returns what is wrong with the text.
   *
   * @return the reason
   */
  public Reason reason() {
    return reason;
  }
}
