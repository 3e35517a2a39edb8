package dev.idgen.server.access;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.DeleteSequenceRequest;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdGenPeerGrpc;
import dev.idgen.api.v1.ListReservationsRequest;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.ReserveRangeRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.api.v1.UndeleteSequenceRequest;
import dev.idgen.api.v1.UpdateSequenceRequest;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.annotation.Nullable;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enforces {@code idgen.access}: who may allocate from, and administer, which sequences. Installed on
 * {@code idgen.v1.IdGen}, {@code idgen.v1.IdGenPeer} (allocation, for forwarding servers) and
 * {@code idgen.v1.SequenceAdmin} only: health and reflection stay open.
 *
 * <p>A caller's identities are those of its verified client certificate (the subject's CN, the whole
 * subject in RFC 2253 form, each DNS and URI subject alternative name) and the identity of its bearer
 * token ({@code authorization: Bearer TOKEN}). The statuses are set here, precisely, rather than by
 * {@code StatusMapper} (which maps the core's exceptions), with the same kind of details
 * ({@code ErrorInfo} reasons UNAUTHENTICATED and PERMISSION_DENIED):
 * <ul>
 *   <li>UNAUTHENTICATED: no identity at all, or a bearer token that is malformed or unknown (a wrong
 *       token is refused even when a certificate identifies the caller); sent before the request is read;
 *       metadata {@code cause}: {@code no_identity}, {@code malformed_authorization}, {@code unknown_token};
 *   <li>PERMISSION_DENIED: no rule of any of its identities allows the operation on the sequence; the
 *       description and the metadata ({@code identity}, {@code operation}, {@code sequence}) name the
 *       identity, the operation and the sequence.
 * </ul>
 * Refusals are logged at INFO as one key=value line; tokens are never logged. A SequenceAdmin call also learns
 * who made it ({@link Caller}: the identity named in refusals, or its address when access control is off), which
 * a reservation records.
 *
 * <p>Thread-safe: immutable rules; each call's state is guarded by its own lock.
 */
@ThreadSafe
public final class AccessInterceptor implements ServerInterceptor {

  private static final Logger log = LoggerFactory.getLogger(AccessInterceptor.class);

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final String BEARER = "bearer ";

  private final boolean enabled;
  private final List<Rule> rules;
  private final BearerTokens tokens;

  AccessInterceptor(OperationsSettings.Access access, BearerTokens tokens) {
    this.enabled = access.enabled();
    this.rules = Rule.compile(access.rules());
    this.tokens = tokens;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    Operation operation = enabled ? operationOf(call.getMethodDescriptor().getServiceName()) : null;
    if (operation == null) {
      // Access control off, or not ours to guard. SequenceAdmin calls still learn who called: the address.
      return SequenceAdminGrpc.SERVICE_NAME.equals(call.getMethodDescriptor().getServiceName())
          ? Caller.start(Caller.address(call), call, headers, next)
          : next.startCall(call, headers);
    }
    String method = call.getMethodDescriptor().getFullMethodName();
    Set<String> identities = new LinkedHashSet<>();
    String token = headers.get(AUTHORIZATION);
    if (token != null) {
      if (!token.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
        return refuse(call, "the authorization header is not 'Bearer <token>'", "malformed_authorization",
            method);
      }
      String identity = tokens.identity(token.substring(BEARER.length()).trim());
      if (identity == null) {
        return refuse(call, "unknown bearer token", "unknown_token", method);
      }
      identities.add(identity);
    }
    identities.addAll(certificateIdentities(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)));
    if (identities.isEmpty()) {
      return refuse(call, "no client identity: access control is on (idgen.access.enabled); present a"
          + " trusted client certificate or an 'authorization: Bearer <token>' header", "no_identity", method);
    }
    CheckedCall<Q, A> checked = new CheckedCall<>(call);
    String primary = identities.iterator().next();
    // SequenceAdmin calls record who made them (a reservation's reserved_by): the identity named in refusals.
    ServerCall.Listener<Q> delegate = operation == Operation.ADMIN
        ? Caller.start(primary, checked, headers, next)
        : next.startCall(checked, headers);
    return new CheckingListener<>(delegate, checked, rulesOf(identities), operation, primary, method);
  }

  /** What calls of {@code service} do; null for services this interceptor does not guard. */
  @Nullable
  private static Operation operationOf(String service) {
    if (IdGenGrpc.SERVICE_NAME.equals(service) || IdGenPeerGrpc.SERVICE_NAME.equals(service)) {
      return Operation.ALLOCATE;
    }
    if (SequenceAdminGrpc.SERVICE_NAME.equals(service)) {
      return Operation.ADMIN;
    }
    return null;
  }

  /** The rules that apply to a caller: those matching any of its identities, in their order. */
  private List<Rule> rulesOf(Set<String> identities) {
    List<Rule> out = new ArrayList<>();
    for (Rule rule : rules) {
      for (String identity : identities) {
        if (rule.matchesIdentity(identity)) {
          out.add(rule);
          break;
        }
      }
    }
    return out;
  }

  /**
   * Checks each request of an identified caller against its rules before the service sees it, and denies the
   * call (PERMISSION_DENIED) if none allows it. Runs on the call's serialized listener callbacks.
   */
  private static final class CheckingListener<Q, A> extends SimpleForwardingServerCallListener<Q> {
    private final CheckedCall<Q, A> checked;
    private final List<Rule> rules;
    private final Operation operation;
    /** The identity named in refusals: the token's if any, else the certificate's first. */
    private final String primary;
    private final String method;

    CheckingListener(ServerCall.Listener<Q> delegate, CheckedCall<Q, A> checked, List<Rule> rules,
        Operation operation, String primary, String method) {
      super(delegate);
      this.checked = checked;
      this.rules = rules;
      this.operation = operation;
      this.primary = primary;
      this.method = method;
    }

    @Override
    public void onMessage(Q message) {
      String sequence = sequenceOf(message);
      boolean allowed = false;
      for (Rule rule : rules) {
        if (sequence == null ? rule.administersAny() : rule.allows(operation, sequence)) {
          allowed = true;
          break;
        }
      }
      if (allowed) {
        super.onMessage(message);
        return;
      }
      String what = sequence == null ? "list sequences (no admin rule)"
          : operation.verb + " sequence '" + sequence + "'";
      log.info("access=denied identity={} method={} sequence={}", primary, method, sequence);
      ErrorStatus denial = ErrorStatus.of(ErrorReason.PERMISSION_DENIED,
              "identity '" + primary + "' may not " + what + " (idgen.access.rules)")
          .put("identity", primary)
          .put("operation", operation.name().toLowerCase(Locale.ROOT));
      if (sequence != null && sequence.length() <= 64) {
        denial.put("sequence", sequence); // not an overlong name: the trailers' size is bounded
      }
      checked.deny(denial.exception());
    }

    @Override
    public void onHalfClose() {
      if (!checked.denied()) {
        super.onHalfClose();
      }
    }

    @Override
    public void onReady() {
      if (!checked.denied()) {
        super.onReady();
      }
    }
  }

  /** Closes the call UNAUTHENTICATED; {@code cause} is the metadata's and the log's short form. */
  private static <Q, A> ServerCall.Listener<Q> refuse(ServerCall<Q, A> call, String message, String cause,
      String method) {
    log.info("access=unauthenticated reason={} method={}", cause, method);
    ErrorStatus.close(call, ErrorStatus.of(ErrorReason.UNAUTHENTICATED, message).put("cause", cause).exception());
    return new ServerCall.Listener<>() {};
  }

  /** The sequence a request is about; null for ListSequences. */
  @Nullable
  private static String sequenceOf(Object message) {
    if (message instanceof AllocateRequest r) {
      return r.getSequence();
    }
    if (message instanceof CreateSequenceRequest r) {
      return r.getName();
    }
    if (message instanceof GetSequenceRequest r) {
      return r.getName();
    }
    if (message instanceof AdvanceSequenceRequest r) {
      return r.getName();
    }
    if (message instanceof ReserveRangeRequest r) {
      return r.getName();
    }
    if (message instanceof ListReservationsRequest r) {
      return r.getName();
    }
    if (message instanceof UpdateSequenceRequest r) {
      return r.getSequence().getName();
    }
    if (message instanceof DeleteSequenceRequest r) {
      return r.getName();
    }
    if (message instanceof UndeleteSequenceRequest r) {
      return r.getName();
    }
    if (message instanceof ListSequencesRequest) {
      return null;
    }
    // A method added to the API without a rule here: refuse rather than let it through.
    return "?unknown-request " + message.getClass().getSimpleName();
  }

  /**
   * The identities of a verified client certificate: the subject's CN, the whole subject (RFC 2253) and
   * the DNS and URI subject alternative names. Empty without TLS or without a client certificate.
   */
  static List<String> certificateIdentities(@Nullable SSLSession session) {
    List<String> out = new ArrayList<>();
    if (session == null) {
      return out;
    }
    Certificate[] chain;
    try {
      chain = session.getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return out; // no client certificate (client-auth optional)
    }
    if (chain.length == 0 || !(chain[0] instanceof X509Certificate cert)) {
      return out;
    }
    String subject = cert.getSubjectX500Principal().getName(X500Principal.RFC2253);
    try {
      for (Rdn rdn : new LdapName(subject).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          out.add(rdn.getValue().toString());
        }
      }
    } catch (InvalidNameException e) {
      // The JDK printed it; it parses. If not, the subject itself still identifies the caller.
    }
    out.add(subject);
    try {
      Collection<List<?>> sans = cert.getSubjectAlternativeNames();
      if (sans != null) {
        for (List<?> san : sans) {
          int type = (Integer) san.get(0);
          if (type == 2 || type == 6) { // dNSName, uniformResourceIdentifier
            out.add(san.get(1).toString());
          }
        }
      }
    } catch (CertificateParsingException e) {
      log.debug("cannot read the subject alternative names of {}: {}", subject, e.toString());
    }
    return out;
  }

  /** A call that the listener can refuse once it has read the request; later operations are dropped. */
  private static final class CheckedCall<Q, A> extends SimpleForwardingServerCall<Q, A> {
    private final Object lock = new Object();

    @GuardedBy("lock")
    private boolean denied;

    CheckedCall(ServerCall<Q, A> delegate) {
      super(delegate);
    }

    void deny(StatusRuntimeException error) {
      synchronized (lock) {
        denied = true;
      }
      super.close(error.getStatus(), error.getTrailers() != null ? error.getTrailers() : new Metadata());
    }

    boolean denied() {
      synchronized (lock) {
        return denied;
      }
    }

    @Override
    public void close(Status status, Metadata trailers) {
      if (!denied()) {
        super.close(status, trailers);
      }
    }

    @Override
    public void sendMessage(A message) {
      if (!denied()) {
        super.sendMessage(message);
      }
    }
  }
}
