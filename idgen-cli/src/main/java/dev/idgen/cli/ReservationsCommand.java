package dev.idgen.cli;

import dev.idgen.api.v1.ListReservationsRequest;
import dev.idgen.api.v1.ListReservationsResponse;
import dev.idgen.api.v1.Reservation;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idgen reservations NAME}: SequenceAdmin/ListReservations, every page. */
@Command(name = "reservations", mixinStandardHelpOptions = true,
    description = {
        "Lists a sequence's past reservations (idgen reserve), oldest first (all pages).",
        "Columns: FIRST LAST COUNT RESERVED_AT RESERVED_BY REQUEST_ID.",
    },
    footer = {"", "Example: idgen reservations orders"})
final class ReservationsCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Option(names = "--page-size", paramLabel = "N", defaultValue = "100",
      description = "Reservations per call; the servers return at most 1000. Default: ${DEFAULT-VALUE}.")
  private int pageSize;

  @Override
  void run(Calls calls, Output out) {
    List<Reservation> reservations = Pages.all(token -> calls.admin().listReservations(
            ListReservationsRequest.newBuilder().setName(name).setPageSize(pageSize).setPageToken(token).build()),
        ListReservationsResponse::getReservationsList, ListReservationsResponse::getNextPageToken);
    out.reservations(reservations);
  }
}
