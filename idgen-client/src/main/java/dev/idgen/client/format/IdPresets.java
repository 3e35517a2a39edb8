package dev.idgen.client.format;

/**
 * Ceilings for a sequence's {@code max} (at creation: {@code idgen create NAME --max N}) and for an
 * {@link IdPermutation}'s, chosen for where the IDs end up.
 */
public final class IdPresets {

  /**
   * {@code 2^53 - 1} (9007199254740991), JavaScript's {@code Number.MAX_SAFE_INTEGER}. A browser's
   * {@code JSON.parse} reads every integer up to it exactly; above it, two IDs can become the same number.
   * Give it as the max of sequences whose IDs reach JavaScript as JSON numbers.
   */
  public static final long JAVASCRIPT_SAFE_MAX = (1L << 53) - 1;

  /**
   * {@code 2^31 - 1} (2147483647): the largest max whose IDs fit a signed 32-bit integer (a Java {@code int},
   * PostgreSQL's {@code integer}).
   */
  public static final long INT32_MAX = Integer.MAX_VALUE;

  private IdPresets() {}
}
