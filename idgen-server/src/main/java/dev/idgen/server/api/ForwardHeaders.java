package dev.idgen.server.api;

import com.google.errorprone.annotations.Immutable;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import javax.annotation.Nullable;

/**
 * The headers of strict forwarding, both ways: what a forwarded call carries ({@code idgen-forwarded-by}, so
 * that the owner never forwards it again, and the first caller's {@code authorization}), and the interceptor
 * that puts them into a served call's context for {@link IdGenService}.
 *
 * <p>Threads: immutable; the keys are constants, and {@link #forCall} makes a new {@link Metadata} each time.
 */
@Immutable
final class ForwardHeaders {
  /** Set on forwarded calls: the forwarding server's name. */
  static final Metadata.Key<String> FORWARDED_BY =
      Metadata.Key.of("idgen-forwarded-by", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  /** The call's {@code idgen-forwarded-by}, or null for a call from a client. */
  static final Context.Key<String> FORWARDED = Context.key("idgen-forwarded-by");
  /** The call's {@code authorization} header, or null: passed on to the owner. */
  static final Context.Key<String> CALLER_AUTHORIZATION = Context.key("idgen-authorization");

  /** This server's name, as forwarded calls name it. */
  private final String self;

  ForwardHeaders(String self) {
    this.self = self;
  }

  /** A forwarded call's headers: who forwards it, and the token of the caller it carries, if any. */
  Metadata forCall(@Nullable String authorization) {
    Metadata headers = new Metadata();
    headers.put(FORWARDED_BY, self);
    if (authorization != null) {
      headers.put(AUTHORIZATION, authorization);
    }
    return headers;
  }

  /** Puts the forwarding and authorization headers into the call's context. */
  static ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        String forwardedBy = headers.get(FORWARDED_BY);
        String authorization = headers.get(AUTHORIZATION);
        if (forwardedBy == null && authorization == null) {
          return next.startCall(call, headers);
        }
        Context context = Context.current().withValues(FORWARDED, forwardedBy, CALLER_AUTHORIZATION, authorization);
        return Contexts.interceptCall(context, call, headers, next);
      }
    };
  }
}
