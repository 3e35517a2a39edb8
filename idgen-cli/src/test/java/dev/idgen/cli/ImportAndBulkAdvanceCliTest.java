package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.cli.CliRunner.Result;
import dev.idgen.server.EmbeddedDaemon;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code idgen import} and the bulk forms of {@code idgen advance} against the real daemon (embedded store).
 * The source database is SQLite (its driver is on the test class path already), holding Leaf's and tinyid's
 * tables with their columns; ImportMariaDbIT runs the same commands against a real MariaDB.
 */
class ImportAndBulkAdvanceCliTest {

  @TempDir
  Path dir;

  private EmbeddedDaemon daemon;
  private CliRunner cli;
  private String url;

  @BeforeEach
  void start() throws SQLException {
    daemon = EmbeddedDaemon.inProcess(dir.resolve("idgen"), List.of());
    cli = CliRunner.inProcess(daemon.inProcessName(), Map.of());
    url = "jdbc:sqlite:" + dir.resolve("source.db");
    sql("CREATE TABLE leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint NOT NULL DEFAULT 1,"
        + " step int NOT NULL, description varchar(256) DEFAULT NULL,"
        + " update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag))");
    sql("CREATE TABLE tiny_id_info (id bigint NOT NULL PRIMARY KEY, biz_type varchar(63) NOT NULL DEFAULT '',"
        + " begin_id bigint NOT NULL DEFAULT 0, max_id bigint NOT NULL DEFAULT 0, step int DEFAULT 0,"
        + " delta int NOT NULL DEFAULT 1, remainder int NOT NULL DEFAULT 0,"
        + " create_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',"
        + " update_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00', version bigint NOT NULL DEFAULT 0,"
        + " UNIQUE (biz_type))");
    sql("CREATE TABLE orders (id bigint PRIMARY KEY, note varchar(20))");
  }

  @AfterEach
  void stop() {
    daemon.close();
  }

  private void sql(String statement) throws SQLException {
    try (Connection db = DriverManager.getConnection(url); Statement s = db.createStatement()) {
      s.executeUpdate(statement);
    }
  }

  private long next(String sequence) {
    Result allocated = cli.run("allocate", sequence);
    assertThat(allocated.exitCode()).as(allocated.err()).isZero();
    return Long.parseLong(allocated.out().trim());
  }

  @Test
  void leaf_import_creates_missing_sequences_and_advances_existing_ones_above_max_id() throws SQLException {
    sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('leaf-orders', 3000, 1000), ('leaf-users', 77, 10)");
    assertThat(cli.run("create", "leaf-users").exitCode()).isZero();

    Result imported = cli.run("import", "leaf", "--jdbc-url", url);

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(imported.out()).containsPattern("leaf-orders +created +3000")
        .containsPattern("leaf-users +advanced +77");
    assertThat(next("leaf-orders")).isEqualTo(3001);
    assertThat(next("leaf-users")).isGreaterThan(77);
  }

  @Test
  void tinyid_import_maps_a_biz_type_that_is_no_sequence_name() throws SQLException {
    sql("INSERT INTO tiny_id_info (id, biz_type, begin_id, max_id, step, delta, remainder)"
        + " VALUES (1, 'test', 1, 5000, 100, 2, 1), (2, '_odd type', 1, 900, 100, 1, 0)");

    Result refused = cli.run("import", "tinyid", "--jdbc-url", url);
    assertThat(refused.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(refused.err()).contains("nothing imported").contains("biz_type=_odd type")
        .contains("'_odd type' is not a valid sequence name");
    assertThat(cli.run("get", "test").exitCode()).as("nothing half-applied").isEqualTo(ExitCodes.NOT_FOUND);

    Result imported = cli.run("import", "tinyid", "--jdbc-url", url, "--name-prefix", "t-",
        "--map", "_odd type=odd");

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(next("t-test")).isEqualTo(5001);
    assertThat(next("odd")).isEqualTo(901);
  }

  @Test
  void sql_import_starts_above_max_of_the_column_and_dry_run_changes_nothing() throws SQLException {
    sql("INSERT INTO orders (id) VALUES (5), (41999), (12)");

    Result dry = cli.run("import", "sql", "--jdbc-url", url, "--table", "orders", "--column", "id",
        "--sequence", "orders", "--dry-run");
    assertThat(dry.exitCode()).as(dry.err()).isZero();
    assertThat(dry.out()).containsPattern("orders +would_create +41999");
    assertThat(cli.run("get", "orders").exitCode()).isEqualTo(ExitCodes.NOT_FOUND);

    Result imported = cli.run("import", "sql", "--jdbc-url", url, "--table", "orders", "--column", "id",
        "--sequence", "orders", "-o", "json");

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(imported.out()).contains("\"name\":\"orders\",\"floor\":\"41999\",\"outcome\":\"created\"");
    assertThat(next("orders")).isEqualTo(42000);
  }

  @Test
  void sql_import_of_an_empty_table_starts_at_start() {
    Result imported = cli.run("import", "sql", "--jdbc-url", url, "--table", "orders", "--column", "id",
        "--sequence", "orders", "--start", "100");

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(next("orders")).isEqualTo(100);
  }

  @Test
  void sql_import_refuses_bad_identifiers_missing_columns_and_text_columns_precisely() throws SQLException {
    sql("INSERT INTO orders (id, note) VALUES (1, 'x')");

    Result injected = cli.run("import", "sql", "--jdbc-url", url, "--table", "orders; DROP TABLE orders",
        "--column", "id", "--sequence", "orders");
    assertThat(injected.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(injected.err()).contains("--table: 'orders; DROP TABLE orders' is not a plain identifier");

    Result missing = cli.run("import", "sql", "--jdbc-url", url, "--table", "orders", "--column", "nope",
        "--sequence", "orders");
    assertThat(missing.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(missing.err()).contains("--column nope: orders has no such column (its columns: id, note)");
    Result noTable = cli.run("import", "sql", "--jdbc-url", url, "--table", "invoices", "--column", "id",
        "--sequence", "invoices");
    assertThat(noTable.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(noTable.err()).contains("--table invoices: no such table in " + url);

    Result text = cli.run("import", "sql", "--jdbc-url", url, "--table", "orders", "--column", "note",
        "--sequence", "orders");
    assertThat(text.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(text.err()).contains("--column note of orders is").contains("not an integer column");
    assertThat(cli.run("get", "orders").exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
  }

  @Test
  void import_loads_the_driver_from_driver_jar() throws Exception {
    sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('a', 10, 5)");
    Path jar = Path.of(org.sqlite.JDBC.class.getProtectionDomain().getCodeSource().getLocation().toURI());

    Result imported = cli.run("import", "leaf", "--jdbc-url", url, "--driver-jar", jar.toString());
    Result wrong = cli.run("import", "leaf", "--jdbc-url", "jdbc:nosuch://x", "--driver-jar", jar.toString());

    assertThat(imported.exitCode()).as(imported.err()).isZero();
    assertThat(next("a")).isEqualTo(11);
    assertThat(wrong.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(wrong.err()).contains("no driver in it accepts jdbc:nosuch://x");
  }

  @Test
  void bulk_advance_from_a_file_reports_every_row_and_goes_on_after_a_failure() throws Exception {
    assertThat(cli.run("create", "a").exitCode()).isZero();
    assertThat(cli.run("create", "c").exitCode()).isZero();
    Path floors = Files.writeString(dir.resolve("floors.txt"), "# name floor\na 500\nb 600  # missing\n\nc 700\n");

    Result dry = cli.run("advance", "--file", floors.toString(), "--dry-run");
    assertThat(dry.out()).containsPattern("a +would_advance +500").containsPattern("c +would_advance +700");
    assertThat(next("a")).isLessThan(500);

    Result advanced = cli.run("advance", "--file", floors.toString());

    assertThat(advanced.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
    assertThat(advanced.out()).containsPattern("a +advanced +500 +floors.txt:2")
        .containsPattern("b +failed +600 +floors.txt:3 +no such sequence")
        .containsPattern("c +advanced +700 +floors.txt:5");
    assertThat(next("a")).isGreaterThan(500);
    assertThat(next("c")).isGreaterThan(700);
  }

  @Test
  void bulk_advance_refuses_a_file_with_a_bad_line_before_any_call() throws Exception {
    assertThat(cli.run("create", "a").exitCode()).isZero();
    Path floors = Files.writeString(dir.resolve("floors.txt"), "a 500\nb lots\n-bad 3\n");

    Result refused = cli.run("advance", "--file", floors.toString());

    assertThat(refused.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(refused.err()).contains("nothing applied").contains("floors.txt:2: floor 'lots' is not an integer")
        .contains("floors.txt:3: '-bad' is not a valid sequence name");
    assertThat(next("a")).isLessThan(500);
  }

  @Test
  void bulk_advance_by_prefix_advances_every_matching_sequence_and_reports_a_failing_one() {
    for (String name : new String[] {"orders-eu", "orders-us", "users"}) {
      assertThat(cli.run("create", name).exitCode()).isZero();
    }
    assertThat(cli.run("create", "orders-small", "--max", "100").exitCode()).isZero();

    Result advanced = cli.run("advance", "--prefix", "orders-", "--floor", "1000");

    assertThat(advanced.exitCode()).isEqualTo(ExitCodes.FAILED_PRECONDITION);
    assertThat(advanced.out()).containsPattern("orders-eu +advanced +1000")
        .containsPattern("orders-small +failed +1000 .*FAILED_PRECONDITION")
        .containsPattern("orders-us +advanced +1000").doesNotContain("users");
    assertThat(next("orders-eu")).isGreaterThan(1000);
    assertThat(next("orders-us")).isGreaterThan(1000);
    assertThat(next("users")).isLessThan(1000);
    Result none = cli.run("advance", "--prefix", "nothing-", "--floor", "5");
    assertThat(none.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
    assertThat(none.err()).contains("no sequence's name starts with 'nothing-'");
  }
}
