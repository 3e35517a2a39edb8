package dev.idgen.server.api;

import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.SequenceDefinition;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32C;

/**
 * {@code ListSequences} page tokens: opaque to callers (AIP-158), so that what they hold can change
 * without breaking them. A token is the URL-safe base64 (no padding) of a version byte, the last name
 * of the page in UTF-8, and a CRC-32C of both: a token altered or made up by a caller fails the check
 * and is refused with {@code INVALID_PAGE_TOKEN}, instead of silently listing from some other place.
 * The checksum is not a secret (a token only says where a listing resumes, which any caller may ask
 * for anyway), so every server of a cluster reads every other's tokens with no shared key.
 *
 * <p>Stateless and thread-safe.
 */
final class PageTokens {
  /** The first byte of a token; another layout gets another version. */
  private static final byte VERSION = 1;
  private static final int CHECKSUM_BYTES = 4;

  private PageTokens() {}

  /** The token that resumes a listing after {@code lastName}. */
  static String after(String lastName) {
    byte[] name = lastName.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(1 + name.length + CHECKSUM_BYTES);
    b.put(VERSION).put(name);
    b.putInt(checksum(b.array(), 1 + name.length));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
  }

  /**
   * The name a listing resumes after: "" for an empty token (the first page).
   *
   * @throws InvalidRequestException (field {@code page_token}) if the token is not one {@link #after}
   *     made
   */
  static String parse(String token) {
    if (token.isEmpty()) {
      return "";
    }
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(token);
    } catch (IllegalArgumentException e) {
      throw invalid("it is not URL-safe base64", e);
    }
    if (bytes.length < 1 + 1 + CHECKSUM_BYTES || bytes[0] != VERSION) {
      throw invalid("unknown format", null);
    }
    int end = bytes.length - CHECKSUM_BYTES;
    if (ByteBuffer.wrap(bytes, end, CHECKSUM_BYTES).getInt() != checksum(bytes, end)) {
      throw invalid("its checksum does not match: it was altered", null);
    }
    String name = new String(Arrays.copyOfRange(bytes, 1, end), StandardCharsets.UTF_8);
    try {
      return SequenceDefinition.checkName(name);
    } catch (InvalidRequestException e) {
      throw invalid("it does not hold a sequence name", e);
    }
  }

  /** The first byte of a ListReservations token: a token of one listing is refused by the other. */
  private static final byte RESERVATIONS_VERSION = 2;

  /** The ListReservations token that resumes sequence {@code name}'s listing after the reservation at {@code first}. */
  static String afterReservation(String name, long first) {
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(1 + Long.BYTES + n.length + CHECKSUM_BYTES);
    b.put(RESERVATIONS_VERSION).putLong(first).put(n);
    b.putInt(checksum(b.array(), b.position()));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
  }

  /**
   * The first ID a ListReservations listing of sequence {@code name} resumes after: {@link Long#MIN_VALUE} for an
   * empty token (the first page).
   *
   * @throws InvalidRequestException (field {@code page_token}) if the token is not one
   *     {@link #afterReservation} made for this sequence
   */
  static long parseReservation(String name, String token) {
    if (token.isEmpty()) {
      return Long.MIN_VALUE;
    }
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(token);
    } catch (IllegalArgumentException e) {
      throw invalidReservation("it is not URL-safe base64", e);
    }
    if (bytes.length < 1 + Long.BYTES + 1 + CHECKSUM_BYTES || bytes[0] != RESERVATIONS_VERSION) {
      throw invalidReservation("unknown format", null);
    }
    int end = bytes.length - CHECKSUM_BYTES;
    if (ByteBuffer.wrap(bytes, end, CHECKSUM_BYTES).getInt() != checksum(bytes, end)) {
      throw invalidReservation("its checksum does not match: it was altered", null);
    }
    String tokenName = new String(Arrays.copyOfRange(bytes, 1 + Long.BYTES, end), StandardCharsets.UTF_8);
    if (!tokenName.equals(name)) {
      throw invalidReservation("it lists another sequence", null);
    }
    return ByteBuffer.wrap(bytes, 1, Long.BYTES).getLong();
  }

  private static InvalidRequestException invalidReservation(String why, Exception cause) {
    return InvalidRequestException.ofField("page_token", "page_token is not a token ListReservations returned for"
        + " this sequence (" + why + "; expected: empty, or the next_page_token of the previous page, unchanged)",
        cause);
  }

  private static int checksum(byte[] bytes, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, length);
    return (int) crc.getValue();
  }

  private static InvalidRequestException invalid(String why, Exception cause) {
    return InvalidRequestException.ofField("page_token", "page_token is not a token ListSequences returned ("
        + why + "; expected: empty, or the next_page_token of the previous page, unchanged)", cause);
  }
}
