/**
 * The idgen client stub: {@link dev.idgen.client.IdGenClient} and its
 * {@link dev.idgen.client.IdSource}s, which serve IDs from leases fetched in advance from idgen
 * servers.
 *
 * <p>The public surface is {@code IdGenClient}, {@code IdGenClientBuilder}, {@code IdSource},
 * {@code IdSourceStats} (with its {@code Builder}), {@code IdGenClientException} and {@code Ticker};
 * everything else in this package is package-private and free to change.
 */
package dev.idgen.client;
