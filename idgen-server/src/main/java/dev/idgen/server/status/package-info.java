/**
 * Error statuses with idgen's {@code google.rpc} details ({@link dev.idgen.server.status.ErrorStatus}): the
 * {@code ErrorInfo} reason of {@code idgen.v1.ErrorReason} every error carries, {@code RetryInfo} on
 * {@code UNAVAILABLE}, {@code BadRequest} for a bad field.
 *
 * <p>At the bottom with {@code config} and {@code lifecycle}: {@code api} (the core's exceptions),
 * {@code transport} (a busy or stopping server, a call open too long) and {@code access} (refusals) build
 * their statuses with it; it uses none of them.
 */
package dev.idgen.server.status;
