package dev.idgen.cli;

import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.ListSequencesResponse;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceView;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code idgen list}: SequenceAdmin/ListSequences, every page. */
@Command(name = "list", mixinStandardHelpOptions = true,
    description = {
        "Lists every sequence in name order with its live state (all pages, fetched one after"
            + " the other). Reading takes no reserve: the servers load nothing for it.",
        "Columns: NAME START MAX STRIPES REMAINING HEADROOM ORDERING, and when a strict sequence is"
            + " listed also HOME (its home datacenter), OWNER and EPOCH ('-' where there is none).",
    })
final class ListCommand extends RpcCommand {

  @Option(names = "--page-size", paramLabel = "N", defaultValue = "100",
      description = "Sequences per call; the servers return at most 1000. Default: ${DEFAULT-VALUE}.")
  private int pageSize;

  @Option(names = "--show-deleted", description = "List deleted sequences too (not purged ones).")
  private boolean showDeleted;

  @Override
  void run(Calls calls, Output out) {
    List<Sequence> sequences = Pages.all(token -> calls.admin().listSequences(ListSequencesRequest.newBuilder()
            .setPageSize(pageSize)
            .setPageToken(token)
            .setView(SequenceView.SEQUENCE_VIEW_FULL) // the table shows remaining and headroom
            .setShowDeleted(showDeleted)
            .build()),
        ListSequencesResponse::getSequencesList, ListSequencesResponse::getNextPageToken);
    out.sequences(sequences);
  }
}
