package dev.idgen.client.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.client.format.IdFormatException.Reason;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link IdFormat} and {@link CheckDigit}: what a format writes it reads back, the check digits catch what they
 * promise, and a refused text gets a reason and a message that quotes it.
 */
class IdFormatTest {

  private static final IdFormat ORDERS =
      IdFormat.builder().prefix("ORD-").zeroPad(10).checkDigit(CheckDigit.DAMM).build();

  @Test
  void should_write_the_prefix_the_padded_number_and_the_check_digit() {
    assertThat(ORDERS.format(421)).isEqualTo("ORD-00000004219");
    assertThat(ORDERS.parse("ORD-00000004219")).isEqualTo(421);
    assertThat(ORDERS.format(12_345_678_901L)).as("longer than the padding").isEqualTo("ORD-123456789018");
    assertThat(IdFormat.builder().build().format(42)).isEqualTo("42");
    assertThat(IdFormat.builder().zeroPad(6).build().format(42)).isEqualTo("000042");
    // The published examples of each algorithm.
    assertThat(IdFormat.builder().checkDigit(CheckDigit.DAMM).build().format(572)).isEqualTo("5724");
    assertThat(IdFormat.builder().checkDigit(CheckDigit.LUHN).build().format(7_992_739_871L))
        .isEqualTo("79927398713");
  }

  @Test
  void should_read_back_every_id_it_writes() {
    SplittableRandom random = new SplittableRandom(47);
    List<Long> ids = new ArrayList<>(List.of(0L, 1L, 9L, 10L, 99L, 100L, 9_999_999_999L, Long.MAX_VALUE));
    for (int i = 0; i < 200; i++) {
      ids.add(random.nextLong(Long.MAX_VALUE));
      ids.add(random.nextLong(100_000));
    }
    for (String prefix : new String[] {"", "ORD-", "A1"}) {
      for (int pad : new int[] {0, 1, 10, 19}) {
        for (CheckDigit check : CheckDigit.values()) {
          IdFormat f = IdFormat.builder().prefix(prefix).zeroPad(pad).checkDigit(check).build();
          for (long id : ids) {
            String text = f.format(id);
            assertThat(text).startsWith(prefix);
            assertThat(f.parse(text)).as("%s: %s", f, text).isEqualTo(id);
          }
        }
      }
    }
  }

  @Test
  void should_permute_before_writing_and_invert_after_reading() {
    IdPermutation p = IdPermutation.create(1, 99_999, "0123456789abcdef".getBytes(StandardCharsets.US_ASCII));
    IdFormat f = IdFormat.builder().prefix("INV-").zeroPad(5).checkDigit(CheckDigit.LUHN).permutation(p).build();
    Set<String> texts = new HashSet<>();
    for (long id = 1; id <= 1000; id++) {
      String text = f.format(id);
      assertThat(text).hasSize("INV-".length() + 6);
      assertThat(f.parse(text)).isEqualTo(id);
      texts.add(text);
    }
    assertThat(texts).hasSize(1000);
    assertThat(f.format(1)).isNotEqualTo(IdFormat.builder().prefix("INV-").zeroPad(5).checkDigit(CheckDigit.LUHN)
        .build().format(1));
    IdFormatException e = catchThrowableOfType(IdFormatException.class, () -> f.parse("INV-000000"));
    assertThat(e.reason()).isEqualTo(Reason.OUT_OF_RANGE);
    assertThat(e).hasMessage("'INV-000000' is not an ID of this format: the number 0 is outside this format's range"
        + " [1, 99999]");
    assertThatThrownBy(() -> f.format(100_000)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[1, 99999]");
  }

  @Test
  void should_refuse_every_single_digit_error_with_both_check_digits() {
    for (CheckDigit check : new CheckDigit[] {CheckDigit.DAMM, CheckDigit.LUHN}) {
      IdFormat f = IdFormat.builder().zeroPad(8).checkDigit(check).build();
      for (long id : sampleIds()) {
        char[] text = f.format(id).toCharArray();
        for (int i = 0; i < text.length; i++) {
          char original = text[i];
          for (char d = '0'; d <= '9'; d++) {
            if (d == original) {
              continue;
            }
            text[i] = d;
            assertRefused(f, new String(text), Reason.CHECK_FAILED);
          }
          text[i] = original;
        }
      }
    }
  }

  @Test
  void should_refuse_every_adjacent_transposition_with_damm() {
    IdFormat f = IdFormat.builder().zeroPad(8).checkDigit(CheckDigit.DAMM).build();
    int swaps = 0;
    for (long id : sampleIds()) {
      char[] text = f.format(id).toCharArray();
      for (int i = 0; i + 1 < text.length; i++) { // the check digit too
        if (swap(text, i)) {
          assertRefused(f, new String(text), Reason.CHECK_FAILED);
          swaps++;
          swap(text, i);
        }
      }
    }
    assertThat(swaps).as("swaps tried").isGreaterThan(1_000);
  }

  @Test
  void should_refuse_every_adjacent_transposition_with_luhn_but_09_and_90() {
    IdFormat f = IdFormat.builder().zeroPad(8).checkDigit(CheckDigit.LUHN).build();
    int missed = 0;
    for (long id : sampleIds()) {
      char[] text = f.format(id).toCharArray();
      for (int i = 0; i + 1 < text.length; i++) {
        boolean nineAndZero = (text[i] == '0' && text[i + 1] == '9') || (text[i] == '9' && text[i + 1] == '0');
        if (!swap(text, i)) {
          continue;
        }
        String swapped = new String(text);
        if (nineAndZero) {
          assertThat(f.parse(swapped)).as("Luhn's known blind spot: %s", swapped).isNotEqualTo(id);
          missed++;
        } else {
          assertRefused(f, swapped, Reason.CHECK_FAILED);
        }
        swap(text, i);
      }
    }
    assertThat(missed).as("09 and 90 swaps seen").isGreaterThan(10);
  }

  @Test
  void should_say_what_is_wrong_with_a_refused_text() {
    assertRefused(ORDERS, "INV-00000004219", Reason.WRONG_PREFIX,
        "'INV-00000004219' is not an ID of this format: expected it to start with 'ORD-'");
    assertRefused(ORDERS, "ord-00000004219", Reason.WRONG_PREFIX, "expected it to start with 'ORD-'");
    assertRefused(ORDERS, "ORD-0000000421x", Reason.NOT_DIGITS,
        "'ORD-0000000421x' is not an ID of this format: 'x' at index 14 is not a digit (expected only 0-9 after"
            + " 'ORD-')");
    assertRefused(ORDERS, "ORD-00000004\u0662\u0661", Reason.NOT_DIGITS, "at index 12 is not a digit");
    assertRefused(ORDERS, "ORD- 0000004219", Reason.NOT_DIGITS, "' ' at index 4");
    assertRefused(ORDERS, "ORD-", Reason.NOT_DIGITS,
        "'ORD-' is not an ID of this format: no digits after 'ORD-' (expected at least 10 digits and a check digit)");
    assertRefused(ORDERS, "ORD-4219", Reason.WRONG_LENGTH,
        "'ORD-4219' is not an ID of this format: expected at least 10 digits and a check digit, found 4 digits");
    assertRefused(ORDERS, "ORD-000000004219", Reason.WRONG_LENGTH, "a leading zero beyond the padding");
    assertRefused(ORDERS, "ORD-00000004129", Reason.CHECK_FAILED,
        "'ORD-00000004129' is not an ID of this format: its check digit does not match (a digit mistyped, or two"
            + " swapped?)");
    IdFormat plain = IdFormat.builder().build();
    assertRefused(plain, "9223372036854775808", Reason.OUT_OF_RANGE, "above a long's largest, 9223372036854775807");
    assertRefused(plain, "99999999999999999999", Reason.OUT_OF_RANGE, "the number has 20 digits");
    assertRefused(plain, "042", Reason.WRONG_LENGTH, "a leading zero beyond the padding");
    assertRefused(plain, "", Reason.NOT_DIGITS, "no digits");
    String longText = "ORD-" + "7".repeat(500);
    assertThat(catchThrowableOfType(IdFormatException.class, () -> ORDERS.parse(longText)).getMessage())
        .as("a long text is quoted in part").hasSizeLessThan(200).contains("...");
  }

  @Test
  void should_refuse_what_it_cannot_write() {
    assertThatThrownBy(() -> ORDERS.format(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id -1 is negative: an IdFormat writes IDs >= 0");
    assertThatThrownBy(() -> IdFormat.builder().zeroPad(20)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("zeroPad: 20 (expected: 0 to 19, the digits of a long)");
    assertThatThrownBy(() -> IdFormat.builder().zeroPad(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  /** IDs with every digit in every place, and every pair of digits next to each other. */
  private static List<Long> sampleIds() {
    List<Long> ids = new ArrayList<>();
    for (int a = 0; a <= 9; a++) {
      for (int b = 0; b <= 9; b++) {
        ids.add(a * 10_000_000L + b * 1_000_000L + 345_678L - a * 100L - b * 10L);
        ids.add(a * 1_111_111L + b * 10L);
      }
    }
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 50; i++) {
      ids.add(random.nextLong(100_000_000L));
    }
    return ids;
  }

  /** Swaps {@code text[i]} and {@code text[i + 1]}; false (and nothing done) when they are the same digit. */
  private static boolean swap(char[] text, int i) {
    char c = text[i];
    if (c == text[i + 1]) {
      return false;
    }
    text[i] = text[i + 1];
    text[i + 1] = c;
    return true;
  }

  /** For the loops over thousands of texts: no AssertJ unless it fails. */
  private static void assertRefused(IdFormat f, String text, Reason reason) {
    try {
      long id = f.parse(text);
      throw new AssertionError(f + " accepted " + text + " as " + id);
    } catch (IdFormatException e) {
      if (e.reason() != reason) {
        throw new AssertionError(f + " refused " + text + " for " + e.reason() + ", expected " + reason, e);
      }
    }
  }

  private static void assertRefused(IdFormat f, String text, Reason reason, String message) {
    IdFormatException e = catchThrowableOfType(IdFormatException.class, () -> f.parse(text));
    assertThat(e).as("%s refuses %s", f, text).isNotNull();
    assertThat(e.reason()).as("why %s refuses %s", f, text).isEqualTo(reason);
    assertThat(e).hasMessageContaining(message);
  }
}
