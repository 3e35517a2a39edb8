package dev.idgen.core;

/**
 * An etag (definition version) that is not the sequence's current one: someone changed the sequence since
 * the caller read it (AIP-154). Nothing was changed; the server answers ABORTED: read it again and decide.
 */
public final class SequenceChangedException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final String currentEtag;

  public SequenceChangedException(String sequence, String givenEtag, String currentEtag) {
    super("sequence '" + sequence + "': etag '" + SequenceDefinition.printable(givenEtag) + "' is not its"
        + " current one ('" + currentEtag + "'): it was changed since it was read; read it again (GetSequence)"
        + " and repeat the change if it still applies");
    this.sequence = sequence;
    this.currentEtag = currentEtag;
  }

  public String sequence() {
    return sequence;
  }

  public String currentEtag() {
    return currentEtag;
  }
}
