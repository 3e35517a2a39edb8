package dev.idgen.core;

/**
 * A change of a sequence that cannot be made in its current state ({@code FAILED_PRECONDITION}): the message
 * says why and what to do instead; {@link #kind} says which rule refused it.
 */
public final class ChangeRefusedException extends IdGenException {
  private static final long serialVersionUID = 1L;

  /** Which rule refused the change. */
  public enum Kind {
    /** max below the current one: servers and datacenters may hold reserves up to it. */
    MAX_DECREASE,
    /** start, stripes, ordering or home datacenter: they decide which ID each reserved position is. */
    FIELD_IMMUTABLE,
    /** undelete, or purge, of a sequence that is not deleted. */
    NOT_DELETED,
    /** purge before the expire time. */
    PURGE_BEFORE_EXPIRY
  }

  private final Kind kind;
  private final String sequence;
  /** The field at fault (update mask path), or "". */
  private final String field;

  public ChangeRefusedException(Kind kind, String sequence, String field, String message) {
    super(message);
    this.kind = kind;
    this.sequence = sequence;
    this.field = field;
  }

  public Kind kind() {
    return kind;
  }

  public String sequence() {
    return sequence;
  }

  public String field() {
    return field;
  }
}
