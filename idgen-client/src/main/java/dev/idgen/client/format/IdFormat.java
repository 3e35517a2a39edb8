package dev.idgen.client.format;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.Immutable;
import dev.idgen.client.format.IdFormatException.Reason;
import java.util.Objects;

/**
 * Writes an ID as text and reads it back: an optional {@link IdPermutation}, then a prefix, the number zero-padded
 * to a width, and a check digit.
 *
 * <pre>{@code
 * IdFormat orders = IdFormat.builder().prefix("ORD-").zeroPad(10).checkDigit(CheckDigit.DAMM).build();
 * orders.format(421);              // "ORD-00000004219"
 * orders.parse("ORD-00000004219");  // 421
 * orders.parse("ORD-00000004129");  // IdFormatException, CHECK_FAILED: two digits swapped
 * }</pre>
 *
 * <p>Each ID has one spelling. {@link #parse} accepts exactly what {@link #format} writes: the prefix as given
 * (case matters), ASCII digits, no fewer digits than the padding, no leading zero beyond it, and the right check
 * digit. Anything else is an {@link IdFormatException} whose message quotes the text and says what was expected.
 *
 * <p>Instances are immutable and thread-safe; build one per kind of ID and share it.
 */
@Immutable
public final class IdFormat {

  /** The most digits a {@code long} has. */
  private static final int MAX_DIGITS = 19;
  /** How much of a refused text a message quotes. */
  private static final int QUOTED = 64;

  private final String prefix;
  private final int zeroPad;
  private final CheckDigit checkDigit;
  private final IdPermutation permutation; // null: none

  private IdFormat(Builder builder) {
    this.prefix = builder.prefix;
    this.zeroPad = builder.zeroPad;
    this.checkDigit = builder.checkDigit;
    this.permutation = builder.permutation;
  }

  /**
   * Returns a builder with no prefix, no padding, no check digit and no permutation.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Writes {@code id}: permuted if the format has a permutation, then the prefix, the number padded with zeros
   * on the left to the padding's width, and the check digit.
   *
   * @param id the ID, {@code >= 0}, and inside the permutation's range if there is one
   * @return the text, which {@link #parse} reads back as {@code id}
   * @throws IllegalArgumentException if {@code id} is negative or outside the permutation's range
   */
  public String format(long id) {
    long number = id;
    if (permutation != null) {
      number = permutation.apply(id);
    }
    if (number < 0) {
      throw new IllegalArgumentException("id " + id + " is negative: an IdFormat writes IDs >= 0");
    }
    String digits = Long.toString(number);
    StringBuilder out = new StringBuilder(prefix.length() + Math.max(zeroPad, digits.length()) + 1);
    out.append(prefix);
    for (int i = digits.length(); i < zeroPad; i++) {
      out.append('0');
    }
    out.append(digits);
    if (checkDigit != CheckDigit.NONE) {
      out.append(checkDigit.compute(out, prefix.length(), out.length()));
    }
    return out.toString();
  }

  /**
   * Reads an ID that {@link #format} wrote, verifying its check digit and inverting the permutation.
   *
   * @param text the text, such as {@code "ORD-00000004215"}
   * @return the ID
   * @throws IdFormatException if {@code text} is not what this format writes, with the reason and a message that
   *     quotes it
   */
  public long parse(CharSequence text) {
    Objects.requireNonNull(text, "text");
    int length = text.length();
    if (!startsWithPrefix(text)) {
      throw refused(Reason.WRONG_PREFIX, text, "expected it to start with '" + prefix + "'");
    }
    int from = prefix.length();
    for (int i = from; i < length; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        throw refused(Reason.NOT_DIGITS, text,
            "'" + c + "' at index " + i + " is not a digit (expected only 0-9 after '" + prefix + "')");
      }
    }
    if (length == from) {
      throw refused(Reason.NOT_DIGITS, text, "no digits after '" + prefix + "' (expected " + shape() + ")");
    }
    int check = checkDigit == CheckDigit.NONE ? 0 : 1;
    int to = length - check; // the number's digits are text[from, to)
    int digits = to - from;
    if (digits < Math.max(1, zeroPad)) {
      throw refused(Reason.WRONG_LENGTH, text, "expected " + shape() + ", found " + (length - from) + " digit"
          + (length - from == 1 ? "" : "s"));
    }
    if (digits > Math.max(1, zeroPad) && text.charAt(from) == '0') {
      throw refused(Reason.WRONG_LENGTH, text,
          "a leading zero beyond the padding (expected " + shape() + ", with no other leading zero)");
    }
    if (digits > MAX_DIGITS) {
      throw refused(Reason.OUT_OF_RANGE, text, "the number has " + digits + " digits, above a long's largest, "
          + Long.MAX_VALUE);
    }
    long number = 0;
    for (int i = from; i < to; i++) {
      number = number * 10 + (text.charAt(i) - '0');
      // With at most 19 digits, an overflow wraps once, into the negatives.
      if (number < 0) {
        throw refused(Reason.OUT_OF_RANGE, text, "the number is above a long's largest, " + Long.MAX_VALUE);
      }
    }
    if (check == 1 && checkDigit.compute(text, from, to) != text.charAt(to)) {
      throw refused(Reason.CHECK_FAILED, text,
          "its check digit does not match (a digit mistyped, or two swapped?)");
    }
    if (permutation == null) {
      return number;
    }
    if (number < permutation.start() || number > permutation.max()) {
      throw refused(Reason.OUT_OF_RANGE, text, "the number " + number + " is outside this format's range ["
          + permutation.start() + ", " + permutation.max() + "]");
    }
    return permutation.invert(number);
  }

  private boolean startsWithPrefix(CharSequence text) {
    if (text.length() < prefix.length()) {
      return false;
    }
    for (int i = 0; i < prefix.length(); i++) {
      if (text.charAt(i) != prefix.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** What an ID of this format looks like after its prefix, for messages. */
  private String shape() {
    String number = zeroPad > 1 ? "at least " + zeroPad + " digits" : "at least 1 digit";
    return checkDigit == CheckDigit.NONE ? number : number + " and a check digit";
  }

  private static IdFormatException refused(Reason reason, CharSequence text, String why) {
    String quoted = text.length() <= QUOTED ? text.toString() : text.subSequence(0, QUOTED) + "...";
    return new IdFormatException(reason, "'" + quoted + "' is not an ID of this format: " + why);
  }

  @Override
  public String toString() {
    return "IdFormat[prefix='" + prefix + "', zeroPad=" + zeroPad + ", checkDigit=" + checkDigit
        + (permutation == null ? "" : ", " + permutation) + "]";
  }

  /** Builds an {@link IdFormat}. Not thread-safe; the format it builds is. */
  public static final class Builder {
    private String prefix = "";
    private int zeroPad;
    private CheckDigit checkDigit = CheckDigit.NONE;
    private IdPermutation permutation;

    private Builder() {}

    /**
     * Sets the text before the number, such as {@code "ORD-"}. Default: none.
     *
     * @param prefix the prefix; {@link #parse} requires it exactly, case included
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder prefix(String prefix) {
      this.prefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /**
     * Pads the number with zeros on the left to {@code digits} digits; a longer number is written in full. The
     * check digit comes after these digits. Default: 0, no padding.
     *
     * @param digits the width, 0 to 19
     * @return this builder
     * @throws IllegalArgumentException if {@code digits} is outside 0 to 19
     */
    @CanIgnoreReturnValue
    public Builder zeroPad(int digits) {
      if (digits < 0 || digits > MAX_DIGITS) {
        throw new IllegalArgumentException("zeroPad: " + digits + " (expected: 0 to " + MAX_DIGITS
            + ", the digits of a long)");
      }
      this.zeroPad = digits;
      return this;
    }

    /**
     * Sets the check digit appended after the number. Default: {@link CheckDigit#NONE}.
     *
     * @param checkDigit the algorithm
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder checkDigit(CheckDigit checkDigit) {
      this.checkDigit = Objects.requireNonNull(checkDigit, "checkDigit");
      return this;
    }

    /**
     * Permutes IDs before they are written, and inverts the permutation when they are parsed. Default: none.
     *
     * @param permutation the permutation; its key must never change for the sequence
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder permutation(IdPermutation permutation) {
      this.permutation = Objects.requireNonNull(permutation, "permutation");
      return this;
    }

    /**
     * Returns the format.
     *
     * @return a new, immutable format
     */
    public IdFormat build() {
      return new IdFormat(this);
    }
  }
}
