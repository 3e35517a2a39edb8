package dev.idgen.server.http;

import com.google.errorprone.annotations.ThreadSafe;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.grpc.Attributes;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import javax.net.ssl.SSLSession;

/**
 * Gives each HTTP call the attributes gRPC's own transport sets: the peer's and the local address, and the
 * TLS session. Armeria's calls have none, and the access rules read the client certificate from the session,
 * ReserveRange the caller's address. The outermost interceptor of the HTTP port.
 *
 * <p>Thread-safe: stateless; each call reads its own request context.
 */
@ThreadSafe
final class CallAttributes implements ServerInterceptor {

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    ServiceRequestContext ctx = ServiceRequestContext.currentOrNull();
    if (ctx == null) {
      return next.startCall(call, headers);
    }
    Attributes.Builder attributes = call.getAttributes().toBuilder()
        .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, ctx.remoteAddress())
        .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, ctx.localAddress());
    SSLSession session = ctx.sslSession();
    if (session != null) {
      attributes.set(Grpc.TRANSPORT_ATTR_SSL_SESSION, session);
    }
    Attributes all = attributes.build();
    return next.startCall(new SimpleForwardingServerCall<Q, A>(call) {
      @Override
      public Attributes getAttributes() {
        return all;
      }
    }, headers);
  }
}
