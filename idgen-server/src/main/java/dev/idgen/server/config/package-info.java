/**
 * The configuration: {@link dev.idgen.server.config.ConfigLoader} layers system properties, the
 * {@code IDGEN_*} environment, a {@code --config} file and {@code reference.conf}; the settings records
 * ({@link dev.idgen.server.config.ServerSettings}, {@link dev.idgen.server.config.OperationsSettings})
 * read and validate it once, at start, into typed immutable values; {@link
 * dev.idgen.server.config.SettingsModule} binds them.
 *
 * <p>Plain values only: what a setting means to a room is decided in that room (the access rules' globs
 * are compiled and applied in {@code access}, the TLS files loaded in {@code transport}). So this package
 * uses nothing of the server's other packages, and every other package may use it. It must not import
 * {@code access}, {@code api}, {@code transport} or {@code metrics}.
 */
package dev.idgen.server.config;
