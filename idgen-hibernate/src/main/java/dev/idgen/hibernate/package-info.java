/**
 * Entity IDs from idgen for Hibernate ORM 7: {@link dev.idgen.hibernate.IdgenId} on an id field, and the
 * setting {@link dev.idgen.hibernate.IdgenHibernate#CLIENT} that hands Hibernate the client.
 *
 * <p>Threads: Hibernate makes one generator per annotated field when the entity factory starts, then calls it
 * from every session's thread. A generator holds only its sequence's {@link dev.idgen.client.IdSource}, which is
 * thread-safe, and serves each ID from the source's lease in memory: no call to a server per entity.
 */
package dev.idgen.hibernate;
