package dev.idgen.server.access;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Who made the current {@code SequenceAdmin} call, as the records of its effects keep it (a reservation's
 * {@code reserved_by}): the identity the access rules identified it by (its bearer token's, else its
 * certificate's first) when access control is on, otherwise the caller's network address as this server
 * saw it. {@link AccessInterceptor} puts it in the call's {@link Context}, for SequenceAdmin calls only (the
 * Allocate path is left as it was: a context per call costs CPU there and nothing reads it).
 *
 * <p>Stateless; thread-safe.
 */
public final class Caller {
  private static final Context.Key<String> WHO = Context.key("idgen-caller");
  /** When nothing identified the caller (a call that did not pass the interceptor: in-process tests). */
  public static final String UNKNOWN = "unknown";

  private Caller() {}

  /** The current call's caller, or {@link #UNKNOWN}. */
  public static String current() {
    String who = WHO.get();
    return who == null ? UNKNOWN : who;
  }

  /** Starts {@code call} with {@code who} as its caller. */
  static <Q, A> ServerCall.Listener<Q> start(String who, ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    return Contexts.interceptCall(Context.current().withValue(WHO, who), call, headers, next);
  }

  /** The caller's address: {@code host:port}, or the transport's own form (in-process); UNKNOWN if none. */
  static String address(ServerCall<?, ?> call) {
    SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    if (remote instanceof InetSocketAddress inet) {
      String host = inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
      return (host.contains(":") ? "[" + host + "]" : host) + ":" + inet.getPort();
    }
    return remote == null ? UNKNOWN : remote.toString();
  }
}
