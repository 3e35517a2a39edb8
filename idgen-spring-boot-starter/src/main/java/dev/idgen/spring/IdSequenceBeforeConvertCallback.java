package dev.idgen.spring;

import dev.idgen.client.IdGenClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.data.mapping.PersistentPropertyAccessor;
import org.springframework.data.relational.core.mapping.RelationalMappingContext;
import org.springframework.data.relational.core.mapping.RelationalPersistentEntity;
import org.springframework.data.relational.core.mapping.RelationalPersistentProperty;
import org.springframework.data.relational.core.mapping.event.BeforeConvertCallback;

/**
 * Spring Data JDBC: fills an {@code @Id} also annotated {@code @IdSequence("orders")} when it is null or 0,
 * from that sequence. Through the mapping context's accessor, so records and {@code withId} entities work.
 * The mapping context and the client are looked up at the first save (Spring Data's own configuration may come
 * after this one). Thread-safe and stateless: the client keeps one thread-safe source per name
 * ({@link IdGenClient#sequence}).
 */
final class IdSequenceBeforeConvertCallback implements BeforeConvertCallback<Object> {
  private final ObjectProvider<RelationalMappingContext> mapping;
  private final ObjectProvider<IdGenClient> client;

  IdSequenceBeforeConvertCallback(ObjectProvider<RelationalMappingContext> mapping, ObjectProvider<IdGenClient> client) {
    this.mapping = mapping;
    this.client = client;
  }

  @Override
  public Object onBeforeConvert(Object aggregate) {
    RelationalPersistentEntity<?> entity = mapping.getObject().getPersistentEntity(aggregate.getClass());
    if (entity == null || !entity.hasIdProperty()) {
      return aggregate;
    }
    RelationalPersistentProperty id = entity.getRequiredIdProperty();
    IdSequence sequence = id.findAnnotation(IdSequence.class);
    if (sequence == null) {
      return aggregate;
    }
    PersistentPropertyAccessor<Object> accessor = entity.getPropertyAccessor(aggregate);
    Object current = accessor.getProperty(id);
    if (current != null && !(current instanceof Number n && n.longValue() == 0)) {
      return aggregate;
    }
    Class<?> type = id.getType();
    if (type != Long.class && type != long.class) {
      throw new IllegalStateException(entity.getName() + "." + id.getName() + ": @IdSequence(\"" + sequence.value()
          + "\") fills a long or Long id, not " + type.getName());
    }
    accessor.setProperty(id, client.getObject().sequence(sequence.value()).next());
    return accessor.getBean();
  }
}
