package dev.idgen.client.format;

/**
 * The check digit an {@link IdFormat} appends after the number and verifies when it parses.
 *
 * <p>Both detect every single mistyped digit. {@link #DAMM} also detects every swap of two adjacent digits;
 * {@link #LUHN} misses the swap of {@code 09} and {@code 90}, and is the one payment cards use.
 */
public enum CheckDigit {
  /** No check digit. */
  NONE,
  /**
   * The Luhn (mod 10) algorithm: every second digit from the right doubled. Detects every single-digit error and
   * every adjacent transposition but {@code 09} ↔ {@code 90}.
   */
  LUHN,
  /**
   * H. Michael Damm's algorithm (2004), over a totally anti-symmetric quasigroup of order 10. Detects every
   * single-digit error and every adjacent transposition.
   */
  DAMM;

  /** Damm's table: row is the interim digit, column the next digit of the input. */
  private static final byte[][] DAMM_TABLE = {
    {0, 3, 1, 7, 5, 9, 8, 6, 4, 2},
    {7, 0, 9, 2, 1, 5, 4, 8, 6, 3},
    {4, 2, 0, 6, 8, 7, 1, 3, 5, 9},
    {1, 7, 5, 0, 9, 8, 3, 4, 2, 6},
    {6, 1, 2, 3, 0, 4, 5, 9, 7, 8},
    {3, 6, 7, 4, 2, 0, 9, 5, 8, 1},
    {5, 8, 6, 9, 7, 2, 0, 1, 3, 4},
    {8, 9, 4, 5, 3, 6, 2, 0, 1, 7},
    {9, 4, 3, 8, 6, 1, 7, 2, 0, 5},
    {2, 5, 8, 1, 4, 3, 6, 7, 9, 0},
  };

  /**
   * The check digit of {@code digits[from, to)}, which are ASCII digits.
   *
   * @throws IllegalStateException for {@link #NONE}
   */
  char compute(CharSequence digits, int from, int to) {
    return switch (this) {
      case LUHN -> luhn(digits, from, to);
      case DAMM -> damm(digits, from, to);
      case NONE -> throw new IllegalStateException("no check digit to compute for " + this);
    };
  }

  private static char luhn(CharSequence digits, int from, int to) {
    int sum = 0;
    boolean doubled = true; // the number's rightmost digit is doubled: the check digit comes after it
    for (int i = to - 1; i >= from; i--) {
      int d = digits.charAt(i) - '0';
      if (doubled) {
        d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      }
      sum += d;
      doubled = !doubled;
    }
    return (char) ('0' + (10 - sum % 10) % 10);
  }

  private static char damm(CharSequence digits, int from, int to) {
    int interim = 0;
    for (int i = from; i < to; i++) {
      interim = DAMM_TABLE[interim][digits.charAt(i) - '0'];
    }
    return (char) ('0' + interim);
  }
}
