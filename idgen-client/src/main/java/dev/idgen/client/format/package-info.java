/**
 * How IDs look outside: {@link dev.idgen.client.format.IdPermutation} (a keyed bijection of a sequence's range,
 * so IDs stop showing volume and order), {@link dev.idgen.client.format.IdFormat} (prefix, zero padding, check
 * digit, parsed back and verified) and {@link dev.idgen.client.format.IdPresets} (ceilings for {@code max}, such as
 * JavaScript's safe integers).
 *
 * <p>Everything here is pure computation on {@code long}s and strings: no server, no I/O, no threads. Every
 * instance is immutable and safe to share between threads. The guide is docs/id-formats.md.
 */
package dev.idgen.client.format;
