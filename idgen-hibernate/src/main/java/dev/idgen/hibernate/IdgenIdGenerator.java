package dev.idgen.hibernate;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.util.EnumSet;
import java.util.function.Function;
import org.hibernate.MappingException;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.generator.BeforeExecutionGenerator;
import org.hibernate.generator.EventType;
import org.hibernate.generator.EventTypeSets;
import org.hibernate.generator.GeneratorCreationContext;
import org.hibernate.id.IdentifierGenerationException;

/**
 * The generator behind {@link IdgenId}. Hibernate makes it; applications use the annotation.
 *
 * <p>Made once per annotated field when the entity factory starts, then shared by every session's thread: it
 * holds its sequence's {@link IdSource} (thread-safe) and nothing mutable. An ID is generated before the insert
 * runs, from the source's lease in memory, so Hibernate can batch the inserts.
 */
@ThreadSafe
public final class IdgenIdGenerator implements BeforeExecutionGenerator {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final String field;
  @SuppressWarnings("serial") // Hibernate never serializes a generator; a source cannot be.
  private final IdSource source;

  /**
   * Called by Hibernate for each field annotated {@link IdgenId}.
   *
   * @param config the field's annotation
   * @param member the field or getter
   * @param context Hibernate's settings, among them {@link IdgenHibernate#CLIENT}
   * @throws MappingException (the entity factory does not start) if the setting is missing or holds no
   *     client, the field is not a {@code long}, or the sequence's name is malformed
   */
  public IdgenIdGenerator(IdgenId config, Member member, GeneratorCreationContext context) {
    this.sequence = config.value();
    this.field = member.getDeclaringClass().getName() + "." + member.getName();
    Class<?> type = member instanceof Field f ? f.getType() : member instanceof Method m ? m.getReturnType() : null;
    if (type != long.class && type != Long.class) {
      throw new MappingException(where() + ": the id must be a long or Long (idgen IDs are 64-bit), not "
          + (type == null ? member : type.getName()));
    }
    Object setting = context.getServiceRegistry().requireService(ConfigurationService.class).getSettings()
        .get(IdgenHibernate.CLIENT);
    this.source = sourceOf(setting);
  }

  private IdSource sourceOf(Object setting) {
    if (setting == null) {
      throw new MappingException(where() + ": Hibernate setting " + IdgenHibernate.CLIENT
          + " is missing; put the IdGenClient object into Hibernate's properties (the Spring Boot starter does)");
    }
    try {
      if (setting instanceof IdGenClient client) {
        return client.sequence(sequence);
      }
      if (setting instanceof Function<?, ?> function) {
        @SuppressWarnings("unchecked") // the setting's documented type: from a sequence's name to its source
        Object s = ((Function<String, ?>) function).apply(sequence);
        if (s instanceof IdSource idSource) {
          return idSource;
        }
      }
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new MappingException(where() + ": " + e.getMessage(), e);
    }
    throw new MappingException(where() + ": Hibernate setting " + IdgenHibernate.CLIENT + " holds a "
        + setting.getClass().getName() + "; expected the IdGenClient object (a string cannot name one)");
  }

  private String where() {
    return "@IdgenId(\"" + sequence + "\") on " + field;
  }

  /**
   * Returns a new ID of the sequence, from the source's lease (it waits only when the lease is used up).
   *
   * @throws IdentifierGenerationException naming the field and the sequence when the source has no ID (an
   *     unknown sequence, servers down past the wait deadline); its cause says why
   */
  @Override
  public Object generate(SharedSessionContractImplementor session, Object owner, Object currentValue,
      EventType eventType) {
    try {
      return source.next();
    } catch (IdGenClientException e) {
      throw new IdentifierGenerationException(where() + ": no ID from sequence '" + sequence + "' ("
          + e.reason() + "): " + e.getMessage(), e);
    }
  }

  @Override
  public EnumSet<EventType> getEventTypes() {
    return EventTypeSets.INSERT_ONLY;
  }
}
