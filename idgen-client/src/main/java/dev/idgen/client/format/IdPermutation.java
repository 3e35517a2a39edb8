package dev.idgen.client.format;

import com.google.errorprone.annotations.Immutable;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A keyed bijection of {@code [start, max]} onto itself: it turns a dense sequence's IDs into IDs of the same range
 * that do not show how many were handed out, or in which order. {@link #invert} gives the original back.
 *
 * <p><b>The construction.</b> An ID's offset {@code id - start} is a number of {@code w} bits, where {@code 2^w} is
 * the smallest power of two above {@code max - start} (at least 2 bits). The offset is split into a high part of
 * {@code w/2} bits and a low part of the rest, and 8 Feistel rounds alternate between them: each
 * round XORs a keyed function of one part into the other. Each round undoes itself, so the whole is a bijection of
 * the {@code w}-bit numbers whatever the round function is. When the result lies above {@code max - start}, the
 * rounds run again on it (cycle walking) until it does not. Walking the cycle of a bijection returns to the range,
 * so this ends, and it is a bijection of the range; {@link #invert} walks the same cycle backwards. The parts may
 * differ by one bit (as in NIST SP 800-38G's FF1), so the {@code w}-bit domain is less than twice the range and a
 * call runs the rounds fewer than 2 times on average. (An even-bit domain would cost up to 4.)
 *
 * <p><b>The round function</b> is multiply-shift hashing, {@code ((part ^ x_i) * m_i) >>> (64 - width)}: the top
 * bits of a 64-bit product with an odd multiplier, which every input bit reaches. It is not linear over GF(2), and
 * eight rounds of it leave no visible pattern between consecutive IDs. It is fast, not a cipher: about 80 million
 * {@code apply} calls a second on one thread (idgen-bench's {@code IdPermutationBenchmark}).
 *
 * <p><b>The round keys</b> ({@code x_i} and {@code m_i}, 16 longs) are the first 128 bytes of
 * {@code HMAC-SHA256(key, "idgen IdPermutation v1" || counter || start || max)} for counters 0 to 3 (one byte,
 * then two big-endian longs). The same key, start and max always give the same permutation, in any JVM and any
 * version of this class that keeps the "v1" label. Another start or max gives an unrelated one: the range is part
 * of the permutation's identity.
 *
 * <p><b>Rules for the caller.</b>
 *
 * <ul>
 *   <li>The key, start and max must never change for a sequence. Another key maps new IDs onto ones already handed
 *       out. Raising a sequence's max later changes the mapping too, so give the permutation the largest max the
 *       sequence may ever have (for example {@link IdPresets#JAVASCRIPT_SAFE_MAX}).
 *   <li>Keep the key secret: with it, anyone can invert the IDs and count them.
 *   <li>Permuted IDs are not ordered: sort by creation time, or by the inverted ID, instead.
 *   <li>{@code apply} and {@code invert} keep IDs unique and inside {@code [start, max]}, so a max below
 *       {@code 2^31} keeps them 32-bit safe.
 * </ul>
 *
 * <p>Instances are immutable and thread-safe. {@code apply} and {@code invert} neither lock nor allocate.
 */
@Immutable
public final class IdPermutation {

  /** The shortest key {@link #create} accepts, in bytes. */
  public static final int MIN_KEY_BYTES = 16;

  private static final byte[] LABEL = "idgen IdPermutation v1".getBytes(StandardCharsets.US_ASCII);

  private final long start;
  private final long max;
  /** {@code max - start}, compared unsigned: the largest offset. */
  private final long lastOffset;
  /** Width of the high part of an offset, in bits (1 to 32). */
  private final int highBits;
  /** Width of the low part, in bits (1 to 32): {@code highBits} or one more. */
  private final int lowBits;
  private final long lowMask;
  // Round keys, unrolled into fields so that a round reads no array (and checks no bound). Eight rounds, each
  // XORing into one part: Luby and Rackoff's proof needs 4, FF1 uses 10.
  private final long x0, x1, x2, x3, x4, x5, x6, x7;
  private final long m0, m1, m2, m3, m4, m5, m6, m7;

  private IdPermutation(long start, long max, long[] keys) {
    this.start = start;
    this.max = max;
    this.lastOffset = max - start;
    int width = Math.max(2, 64 - Long.numberOfLeadingZeros(lastOffset));
    this.highBits = width / 2;
    this.lowBits = width - highBits;
    this.lowMask = -1L >>> (64 - lowBits);
    x0 = keys[0];
    x1 = keys[1];
    x2 = keys[2];
    x3 = keys[3];
    x4 = keys[4];
    x5 = keys[5];
    x6 = keys[6];
    x7 = keys[7];
    // Odd multipliers: multiplying by an odd number is a bijection mod 2^64, so no input bit is thrown away.
    m0 = keys[8] | 1;
    m1 = keys[9] | 1;
    m2 = keys[10] | 1;
    m3 = keys[11] | 1;
    m4 = keys[12] | 1;
    m5 = keys[13] | 1;
    m6 = keys[14] | 1;
    m7 = keys[15] | 1;
  }

  /**
   * Returns the permutation of {@code [start, max]} that {@code key} selects.
   *
   * @param start the smallest ID, usually the sequence's start
   * @param max the largest ID; never change it for a sequence (see the class comment)
   * @param key a secret of at least {@value #MIN_KEY_BYTES} random bytes; it is not kept
   * @return the permutation
   * @throws IllegalArgumentException if {@code max < start} or the key is shorter than {@value #MIN_KEY_BYTES} bytes
   */
  public static IdPermutation create(long start, long max, byte[] key) {
    Objects.requireNonNull(key, "key");
    if (max < start) {
      throw new IllegalArgumentException("max " + max + " is below start " + start + ": the range [start, max] is empty");
    }
    if (key.length < MIN_KEY_BYTES) {
      throw new IllegalArgumentException("key: " + key.length + " bytes (expected: at least " + MIN_KEY_BYTES
          + " random bytes, e.g. from SecureRandom, kept secret and never changed for the sequence)");
    }
    return new IdPermutation(start, max, roundKeys(start, max, key));
  }

  /** The 16 round keys: see the class comment. */
  private static long[] roundKeys(long start, long max, byte[] key) {
    try {
      Mac hmac = Mac.getInstance("HmacSHA256");
      hmac.init(new SecretKeySpec(key, "HmacSHA256"));
      ByteBuffer out = ByteBuffer.allocate(4 * 32);
      for (int counter = 0; counter < 4; counter++) {
        hmac.update(LABEL);
        hmac.update(ByteBuffer.allocate(1 + 16).put((byte) counter).putLong(start).putLong(max).array());
        out.put(hmac.doFinal());
      }
      out.flip();
      long[] keys = new long[16];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = out.getLong();
      }
      return keys;
    } catch (GeneralSecurityException e) {
      // Every Java platform must provide HmacSHA256 (the javax.crypto.Mac Javadoc).
      throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
    }
  }

  /**
   * Returns the smallest ID of the range.
   *
   * @return {@code start}
   */
  public long start() {
    return start;
  }

  /**
   * Returns the largest ID of the range.
   *
   * @return {@code max}
   */
  public long max() {
    return max;
  }

  /**
   * Maps an ID to its permuted ID. Distinct IDs give distinct results, all inside {@code [start, max]}.
   *
   * @param id an ID in {@code [start, max]}
   * @return the permuted ID, in {@code [start, max]}
   * @throws IllegalArgumentException if {@code id} is outside {@code [start, max]}
   */
  public long apply(long id) {
    long offset = id - start;
    if (Long.compareUnsigned(offset, lastOffset) > 0) {
      throw outOfRange("id", id);
    }
    do {
      offset = forward(offset);
    } while (Long.compareUnsigned(offset, lastOffset) > 0);
    return offset + start;
  }

  /**
   * Maps a permuted ID back to the ID it came from: {@code invert(apply(id)) == id}.
   *
   * @param permuted a permuted ID in {@code [start, max]}
   * @return the ID that {@link #apply} maps to it
   * @throws IllegalArgumentException if {@code permuted} is outside {@code [start, max]}
   */
  public long invert(long permuted) {
    long offset = permuted - start;
    if (Long.compareUnsigned(offset, lastOffset) > 0) {
      throw outOfRange("permuted", permuted);
    }
    do {
      offset = backward(offset);
    } while (Long.compareUnsigned(offset, lastOffset) > 0);
    return offset + start;
  }

  private IllegalArgumentException outOfRange(String name, long value) {
    return new IllegalArgumentException(
        name + " " + value + " is outside this permutation's range [" + start + ", " + max + "]");
  }

  /** The rounds on a {@code highBits + lowBits}-bit number. */
  private long forward(long offset) {
    long hi = offset >>> lowBits;
    long lo = offset & lowMask;
    int toHi = 64 - highBits;
    int toLo = 64 - lowBits;
    hi ^= ((lo ^ x0) * m0) >>> toHi;
    lo ^= ((hi ^ x1) * m1) >>> toLo;
    hi ^= ((lo ^ x2) * m2) >>> toHi;
    lo ^= ((hi ^ x3) * m3) >>> toLo;
    hi ^= ((lo ^ x4) * m4) >>> toHi;
    lo ^= ((hi ^ x5) * m5) >>> toLo;
    hi ^= ((lo ^ x6) * m6) >>> toHi;
    lo ^= ((hi ^ x7) * m7) >>> toLo;
    return (hi << lowBits) | lo;
  }

  /** {@link #forward}'s rounds undone, last first. */
  private long backward(long offset) {
    long hi = offset >>> lowBits;
    long lo = offset & lowMask;
    int toHi = 64 - highBits;
    int toLo = 64 - lowBits;
    lo ^= ((hi ^ x7) * m7) >>> toLo;
    hi ^= ((lo ^ x6) * m6) >>> toHi;
    lo ^= ((hi ^ x5) * m5) >>> toLo;
    hi ^= ((lo ^ x4) * m4) >>> toHi;
    lo ^= ((hi ^ x3) * m3) >>> toLo;
    hi ^= ((lo ^ x2) * m2) >>> toHi;
    lo ^= ((hi ^ x1) * m1) >>> toLo;
    hi ^= ((lo ^ x0) * m0) >>> toHi;
    return (hi << lowBits) | lo;
  }

  @Override
  public String toString() {
    return "IdPermutation[" + start + ", " + max + "]";
  }
}
