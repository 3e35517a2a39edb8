package dev.idgen.client;

import io.grpc.Status;

/** A failed {@code Allocate} call: its status, where, and the exception that carried it. Immutable. */
record Failure(Status status, String endpoint, Throwable cause) {
  String describe() {
    String description = status.getDescription();
    return status.getCode() + " from " + endpoint + (description == null ? "" : ": " + description);
  }
}
