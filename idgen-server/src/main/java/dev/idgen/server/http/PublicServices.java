package dev.idgen.server.http;

import com.google.errorprone.annotations.Immutable;
import io.grpc.ServerServiceDefinition;
import java.util.List;

/**
 * The public services as the gRPC port serves them, each already behind its interceptors ({@code GrpcModule}
 * builds them once): the HTTP port serves these very definitions, so both ports apply the same rules. The
 * internal {@code idgen.v1.IdGenPeer} is not among them.
 */
@Immutable
@SuppressWarnings("Immutable") // ServerServiceDefinition is immutable but not annotated
public record PublicServices(List<ServerServiceDefinition> services) {
  public PublicServices {
    services = List.copyOf(services);
  }
}
