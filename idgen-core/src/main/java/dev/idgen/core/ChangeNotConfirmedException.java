package dev.idgen.core;

import java.util.List;

/**
 * A change of a sequence's definition (update, delete, undelete) that is in force in the store, but that some
 * live servers did not apply in time: until they do, they serve it under its previous definition (a lower
 * max, other caps, or, after a delete, as if it were not deleted). The same change again completes it; the
 * server answers UNAVAILABLE, because retrying is the remedy.
 */
public final class ChangeNotConfirmedException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final List<String> unconfirmed;

  public ChangeNotConfirmedException(String sequence, String what, List<String> unconfirmed) {
    super("sequence '" + sequence + "': " + what + " is in force in the store, but " + unconfirmed.size()
        + " server(s) did not apply it in time: " + String.join(", ", unconfirmed) + ". Until they do they"
        + " serve the sequence under its previous definition; make the same call again (without etag) to"
        + " complete it.");
    this.sequence = sequence;
    this.unconfirmed = List.copyOf(unconfirmed);
  }

  public String sequence() {
    return sequence;
  }

  /** The servers (datacenter/name) that had not applied it. */
  public List<String> unconfirmed() {
    return unconfirmed;
  }
}
