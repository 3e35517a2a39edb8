package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.Map;

/**
 * What {@link RangeStore#advance} recorded: per datacenter, the floor-log version that every live server
 * of that datacenter must have applied before the advance is confirmed. Empty for a store that only one
 * process uses. Immutable.
 */
@Immutable
@SuppressWarnings("Immutable") // components are Map.copyOf: unmodifiable
public record AdvanceReceipt(Map<String, Long> versions) {
  public static final AdvanceReceipt NONE = new AdvanceReceipt(Map.of());

  public AdvanceReceipt {
    versions = Map.copyOf(versions);
  }
}
