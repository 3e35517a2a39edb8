package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.cli.CliRunner.Result;
import dev.idgen.server.EmbeddedDaemon;
import dev.idgen.testing.MariaDb;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code idgen import} against a real MariaDB (Debian's package, started by the test: {@link MariaDb}), with
 * Meituan Leaf's and didi tinyid's tables as their projects create them, and an AUTO_INCREMENT table whose newest
 * rows were deleted. The driver reaches the CLI as a user passes it, {@code --driver-jar}. The daemon is the
 * embedded one; the store plays no part in reading the source database.
 */
class ImportMariaDbIT {
  @TempDir
  static Path mariaDir;

  @TempDir
  Path dir;

  private static MariaDb mariaDb;
  private static String driverJar;

  private EmbeddedDaemon daemon;
  private CliRunner cli;

  @BeforeAll
  static void startMariaDb() throws Exception {
    mariaDb = MariaDb.start(mariaDir);
    driverJar = Path.of(org.mariadb.jdbc.Driver.class.getProtectionDomain().getCodeSource().getLocation().toURI())
        .toString();
    sql("", "CREATE DATABASE leaf", "CREATE DATABASE tinyid", "CREATE DATABASE shop", "CREATE DATABASE archive");
    // Leaf's scripts/leaf_alloc.sql.
    sql("leaf", "CREATE TABLE `leaf_alloc` (`biz_tag` varchar(128) NOT NULL DEFAULT '',"
        + " `max_id` bigint(20) NOT NULL DEFAULT '1', `step` int(11) NOT NULL,"
        + " `description` varchar(256) DEFAULT NULL,"
        + " `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,"
        + " PRIMARY KEY (`biz_tag`)) ENGINE=InnoDB");
    // tinyid's tinyid-server/db.sql (its comments left out).
    sql("tinyid", "CREATE TABLE `tiny_id_info` (`id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,"
        + " `biz_type` varchar(63) NOT NULL DEFAULT '', `begin_id` bigint(20) NOT NULL DEFAULT '0',"
        + " `max_id` bigint(20) NOT NULL DEFAULT '0', `step` int(11) DEFAULT '0',"
        + " `delta` int(11) NOT NULL DEFAULT '1', `remainder` int(11) NOT NULL DEFAULT '0',"
        + " `create_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',"
        + " `update_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',"
        + " `version` bigint(20) NOT NULL DEFAULT '0', PRIMARY KEY (`id`), UNIQUE KEY `uniq_biz_type` (`biz_type`))"
        + " ENGINE=InnoDB AUTO_INCREMENT=1 DEFAULT CHARSET=utf8");
  }

  @AfterAll
  static void stopMariaDb() {
    if (mariaDb != null) {
      mariaDb.close();
    }
  }

  @BeforeEach
  void startDaemon() {
    daemon = EmbeddedDaemon.inProcess(dir.resolve("idgen"), List.of());
    cli = CliRunner.inProcess(daemon.inProcessName(), Map.of());
  }

  @AfterEach
  void stopDaemon() {
    daemon.close();
  }

  private static void sql(String database, String... statements) throws SQLException {
    try (Connection db = DriverManager.getConnection(mariaDb.jdbcUrl(database)); Statement s = db.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    }
  }

  private Result importFrom(String database, String... args) {
    List<String> command = new java.util.ArrayList<>(List.of("import"));
    command.addAll(List.of(args));
    command.addAll(List.of("--jdbc-url", mariaDb.jdbcUrl(database), "--driver-jar", driverJar));
    return cli.run(command.toArray(String[]::new));
  }

  private long next(String sequence) {
    Result allocated = cli.run("allocate", sequence);
    assertThat(allocated.exitCode()).as(allocated.err()).isZero();
    return Long.parseLong(allocated.out().trim());
  }

  @Test
  void leaf_import_continues_every_biz_tag_above_its_max_id() throws SQLException {
    sql("leaf", "INSERT INTO leaf_alloc (biz_tag, max_id, step, description)"
        + " VALUES ('leaf-orders', 3000, 1000, 'orders'), ('leaf-users', 77, 10, 'users')");
    assertThat(cli.run("create", "leaf-users").exitCode()).isZero();

    Result dry = importFrom("leaf", "leaf", "--dry-run");
    assertThat(dry.exitCode()).as(dry.err()).isZero();
    assertThat(dry.out()).containsPattern("leaf-orders +would_create +3000");
    assertThat(cli.run("get", "leaf-orders").exitCode()).as("a dry run creates nothing").isEqualTo(ExitCodes.NOT_FOUND);

    Result imported = importFrom("leaf", "leaf");

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(imported.out()).containsPattern("leaf-orders +created +3000")
        .containsPattern("leaf-users +advanced +77");
    assertThat(next("leaf-orders")).isEqualTo(3001);
    assertThat(next("leaf-users")).isGreaterThan(77);
  }

  @Test
  void tinyid_import_continues_every_biz_type_above_its_max_id() throws SQLException {
    sql("tinyid", "INSERT INTO tiny_id_info (biz_type, begin_id, max_id, step, delta, remainder)"
        + " VALUES ('test', 1, 5000, 100, 2, 1), ('test_odd', 1, 900, 100, 1, 0)");

    Result imported = importFrom("tinyid", "tinyid", "--name-prefix", "t-");

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(imported.out()).containsPattern("t-test +created +5000").containsPattern("t-test_odd +created +900");
    assertThat(next("t-test")).isEqualTo(5001);
    assertThat(next("t-test_odd")).isEqualTo(901);
  }

  @Test
  void sql_import_starts_above_the_auto_increment_counter_when_the_newest_rows_were_deleted() throws SQLException {
    sql("shop", "CREATE TABLE orders (id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY, note varchar(20))",
        "INSERT INTO orders (note) VALUES ('a'), ('b'), ('c'), ('d'), ('e')",
        "DELETE FROM orders WHERE id > 3"); // IDs 4 and 5 were issued: MAX(id) = 3, AUTO_INCREMENT = 6

    Result imported = importFrom("shop", "sql", "--table", "orders", "--column", "id", "--sequence", "orders");

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(imported.out()).containsPattern("orders +created +5 +orders.id \\(AUTO_INCREMENT 6, MAX 3\\)");
    assertThat(next("orders")).isEqualTo(6);
  }

  @Test
  void sql_import_of_a_plain_column_reads_max_and_an_emptied_table_keeps_its_counter() throws SQLException {
    sql("shop", "CREATE TABLE invoices (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, legacy_no bigint)",
        "INSERT INTO invoices (legacy_no) VALUES (70), (71000), (700)",
        "CREATE TABLE refunds (id int NOT NULL AUTO_INCREMENT PRIMARY KEY)",
        "INSERT INTO refunds () VALUES (), ()", "DELETE FROM refunds");

    Result plain = importFrom("shop", "sql", "--table", "invoices", "--column", "legacy_no", "--sequence", "legacy");
    Result emptied = importFrom("shop", "sql", "--table", "refunds", "--column", "id", "--sequence", "refunds");

    assertThat(plain.exitCode()).as(plain.err()).isZero();
    assertThat(next("legacy")).as("no AUTO_INCREMENT column: MAX alone").isEqualTo(71001);
    assertThat(emptied.exitCode()).as(emptied.err()).isZero();
    assertThat(next("refunds")).as("an empty table whose counter went to 3").isEqualTo(3);
  }

  @Test
  void sql_import_looks_in_the_connections_database_unless_the_table_names_another() throws SQLException {
    sql("shop", "CREATE TABLE parcels (id bigint PRIMARY KEY)", "INSERT INTO parcels VALUES (10)");
    sql("archive", "CREATE TABLE parcels (id bigint PRIMARY KEY, old_id bigint)",
        "INSERT INTO parcels VALUES (900, 9000)");

    Result otherDatabasesColumn = importFrom("shop", "sql", "--table", "parcels", "--column", "old_id",
        "--sequence", "parcels");
    Result qualified = importFrom("shop", "sql", "--table", "archive.parcels", "--column", "old_id",
        "--sequence", "parcels");

    assertThat(otherDatabasesColumn.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(otherDatabasesColumn.err()).contains("--column old_id: parcels has no such column (its columns: id)");
    assertThat(qualified.exitCode()).as(qualified.err()).isZero();
    assertThat(next("parcels")).isEqualTo(9001);
  }

  @Test
  void a_wrong_database_is_refused_with_the_drivers_reason_and_changes_nothing() {
    Result refused = importFrom("nosuchdb", "leaf");

    assertThat(refused.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(refused.err()).contains("--jdbc-url " + mariaDb.jdbcUrl("nosuchdb")).contains("nosuchdb");
    assertThat(cli.run("list").out()).doesNotContain("leaf-");
  }
}
