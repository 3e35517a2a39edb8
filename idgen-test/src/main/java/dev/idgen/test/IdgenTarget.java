package dev.idgen.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Asks {@link IdgenDaemonExtension} for the daemon's address, {@code 127.0.0.1:<port>} (plaintext), as a
 * {@code String} parameter: for code under test that builds its own client, or a Spring property such as
 * {@code idgen.client.targets}.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface IdgenTarget {}
