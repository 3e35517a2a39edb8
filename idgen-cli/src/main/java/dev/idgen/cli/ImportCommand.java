package dev.idgen.cli;

import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code idgen import sql|leaf|tinyid}: reads how far an existing ID space went from a database over JDBC,
 * then creates or advances one idgen sequence per space so that it continues above everything used there
 * ({@link Floors}: created starting at floor + 1, or advanced to the floor; every row reported).
 *
 * <p>The floor is the largest ID the old allocator may have issued:
 * <ul>
 *   <li>sql: {@code SELECT MAX(column) FROM table}; on MySQL and MariaDB the larger of that and the table's
 *       AUTO_INCREMENT counter less one, since deleting the newest rows lowers MAX below IDs already issued.
 *   <li>Leaf ({@code leaf_alloc}): {@code max_id}. Leaf's servers hand out {@code [max_id - step, max_id)}
 *       from the segment they fetched last ({@code UPDATE leaf_alloc SET max_id = max_id + step}), and
 *       their double buffer bumps {@code max_id} before it uses the next segment, so nothing issued
 *       reaches {@code max_id}: it is a safe floor once Leaf's servers are stopped.
 *   <li>tinyid ({@code tiny_id_info}): {@code max_id}. A segment hands out IDs up to and including
 *       {@code max_id} (with its delta and remainder), so the floor is {@code max_id}, tinyid stopped.
 * </ul>
 *
 * <p>No JDBC driver ships with idgen (MariaDB's and MySQL's are copyleft): {@code --driver-jar} names one,
 * loaded in its own class loader and asked directly ({@code Driver.connect}), since DriverManager ignores
 * drivers from loaders other than the caller's. Without it DriverManager looks on the class path.
 */
@Command(name = "import", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Continues existing ID spaces: creates or advances idgen sequences so that they start above",
        "everything already used. Stop the old allocator (or the writers) first.",
        "  sql:    --table T --column C --sequence NAME, from SELECT MAX(C) FROM T",
        "  leaf:   every row of Meituan Leaf's leaf_alloc (biz_tag, max_id)",
        "  tinyid: every row of didi tinyid's tiny_id_info (biz_type, max_id)",
        "A missing sequence is created starting at floor + 1; an existing one is advanced to the floor.",
        "Prints one row per sequence; goes on after a failed row and exits with the first failure's code.",
    },
    footer = {"", "Examples:",
        "  idgen import leaf --jdbc-url jdbc:mariadb://db:3306/leaf --driver-jar mariadb-java-client.jar --dry-run",
        "  idgen import sql --jdbc-url jdbc:postgresql://db/shop --table orders --column id --sequence orders"})
final class ImportCommand extends RpcCommand {

  /** Where the ID spaces come from. */
  enum Source { sql, leaf, tinyid }

  /** A plain SQL identifier, optionally schema-qualified once: anything else is refused, never quoted in. */
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");

  @Parameters(index = "0", paramLabel = "SOURCE", description = "sql, leaf or tinyid.")
  private Source source;

  @Option(names = "--jdbc-url", paramLabel = "URL", required = true,
      description = "The database, e.g. jdbc:mariadb://db:3306/leaf or jdbc:postgresql://db/shop.")
  private String jdbcUrl;

  @Option(names = "--driver-jar", paramLabel = "FILE",
      description = "The JDBC driver's jar (none ships with idgen). Default: the class path.")
  private Path driverJar;

  @Option(names = "--user", paramLabel = "USER", description = "The database user, if not in the URL.")
  private String user;

  @Option(names = "--password-env", paramLabel = "VARIABLE",
      description = "The environment variable holding the database password (kept off the command line).")
  private String passwordEnv;

  @Option(names = "--table", paramLabel = "TABLE", description = "sql: the table (or schema.table).")
  private String table;

  @Option(names = "--column", paramLabel = "COLUMN", description = "sql: the integer ID column.")
  private String column;

  @Option(names = "--sequence", paramLabel = "NAME", description = "sql: the idgen sequence.")
  private String sequence;

  @Option(names = "--start", paramLabel = "ID",
      description = "sql: the first ID if the table is empty. Default: 1.")
  private long start = 1;

  @Option(names = "--name-prefix", paramLabel = "PREFIX", defaultValue = "",
      description = "leaf, tinyid: put before each biz_tag/biz_type to make the sequence name.")
  private String namePrefix;

  @Option(names = "--map", paramLabel = "TAG=NAME",
      description = "leaf, tinyid: the sequence name for one biz_tag/biz_type (repeatable; overrides"
          + " --name-prefix), for tags that are not valid sequence names.")
  private Map<String, String> map = new LinkedHashMap<>();

  @Option(names = "--dry-run", description = "Print what would be created or advanced, change nothing.")
  private boolean dryRun;

  private List<Floors.Row> rows;

  @Override
  java.time.Duration defaultDeadline() {
    return java.time.Duration.ofSeconds(60); // advance waits for every server and for client leases
  }

  @Override
  void checkOptions(CommandLine commandLine) {
    if (source == Source.sql) {
      if (table == null || column == null || sequence == null) {
        throw new ParameterException(commandLine, "import sql needs --table, --column and --sequence");
      }
      checkIdentifier(commandLine, "--table", table, true);
      checkIdentifier(commandLine, "--column", column, false);
      String problem = Floors.nameProblem(sequence);
      if (problem != null) {
        throw new ParameterException(commandLine, "--sequence: " + problem);
      }
      if (start < 1) {
        throw new ParameterException(commandLine, "--start: " + start + " (expected: >= 1)");
      }
    } else if (table != null || column != null || sequence != null) {
      throw new ParameterException(commandLine, "--table, --column and --sequence are for import sql;"
          + " import " + source + " reads its own table");
    }
    if (driverJar != null && !Files.isReadable(driverJar)) {
      throw new ParameterException(commandLine, "--driver-jar: cannot read " + driverJar);
    }
    // Read the database before any call, so that a bad row or a bad table changes nothing in idgen.
    try (Connection db = connect(commandLine)) {
      rows = source == Source.sql ? sqlRows(commandLine, db) : allocatorRows(commandLine, db);
    } catch (SQLException e) {
      throw new ParameterException(commandLine, "--jdbc-url " + jdbcUrl + ": " + e.getMessage()
          + (e.getSQLState() == null ? "" : " (SQLState " + e.getSQLState() + ")"));
    }
  }

  private static void checkIdentifier(CommandLine commandLine, String option, String value, boolean qualified) {
    String[] parts = value.split("\\.", -1);
    boolean ok = parts.length == 1 || (qualified && parts.length == 2);
    for (String part : parts) {
      ok &= IDENTIFIER.matcher(part).matches();
    }
    if (!ok) {
      throw new ParameterException(commandLine, option + ": '" + value + "' is not a plain identifier"
          + " (expected: letters, digits and _, starting with a letter or _"
          + (qualified ? "; schema.table allowed" : "") + "); nothing else is put into the SQL");
    }
  }

  private Connection connect(CommandLine commandLine) throws SQLException {
    Properties properties = new Properties();
    if (user != null) {
      properties.setProperty("user", user);
    }
    if (passwordEnv != null) {
      String password = System.getenv(passwordEnv);
      if (password == null) {
        throw new ParameterException(commandLine, "--password-env: $" + passwordEnv + " is not set");
      }
      properties.setProperty("password", password);
    }
    if (driverJar == null) {
      return DriverManager.getConnection(jdbcUrl, properties);
    }
    URLClassLoader loader;
    try {
      loader = new URLClassLoader(new URL[] {driverJar.toUri().toURL()}, getClass().getClassLoader());
    } catch (MalformedURLException e) {
      throw new ParameterException(commandLine, "--driver-jar: " + e.getMessage());
    }
    for (Driver driver : ServiceLoader.load(Driver.class, loader)) {
      if (driver.acceptsURL(jdbcUrl)) {
        Connection connection = driver.connect(jdbcUrl, properties);
        if (connection != null) {
          return connection;
        }
      }
    }
    throw new ParameterException(commandLine, "--driver-jar " + driverJar + ": no driver in it accepts "
        + jdbcUrl + " (expected: a JDBC 4 driver jar for that database)");
  }

  private List<Floors.Row> sqlRows(CommandLine commandLine, Connection db) throws SQLException {
    String quote = db.getMetaData().getIdentifierQuoteString().strip();
    String quotedTable = quoteQualified(table, quote);
    String quotedColumn = quote + column + quote;
    TableName name = TableName.of(table, db);
    checkColumnExists(commandLine, db, name);
    OptionalLong counter = name.mysql() ? autoIncrementCounter(db, name) : OptionalLong.empty();
    try (Statement statement = db.createStatement();
        ResultSet max = statement.executeQuery("SELECT MAX(" + quotedColumn + ") FROM " + quotedTable)) {
      int type = max.getMetaData().getColumnType(1);
      if (!isInteger(type)) {
        throw new ParameterException(commandLine, "--column " + column + " of " + table + " is "
            + max.getMetaData().getColumnTypeName(1) + ", not an integer column");
      }
      max.next();
      long value = max.getLong(1);
      boolean empty = max.wasNull();
      String where = table + "." + column;
      if (counter.isPresent() && counter.getAsLong() - 1 > (empty ? start - 1 : value)) {
        // Rows at the top were deleted (or a rolled-back insert took IDs): the counter says how far it went.
        return List.of(new Floors.Row(sequence, counter.getAsLong() - 1,
            where + " (AUTO_INCREMENT " + counter.getAsLong() + ", MAX " + (empty ? "none" : value) + ")"));
      }
      if (empty) {
        return List.of(new Floors.Row(sequence, start - 1, where + " (empty)"));
      }
      return List.of(new Floors.Row(sequence, value, where));
    }
  }

  /**
   * The table's next AUTO_INCREMENT value, if {@link #column} is its AUTO_INCREMENT column. MySQL 8 caches
   * information_schema's table statistics for a day unless the session asks for them fresh; MariaDB has no
   * such cache (nor the variable, hence the ignored failure).
   */
  private OptionalLong autoIncrementCounter(Connection db, TableName name) throws SQLException {
    try (Statement fresh = db.createStatement()) {
      fresh.execute("SET SESSION information_schema_stats_expiry = 0");
    } catch (SQLException notMySql8) {
      // MariaDB, MySQL 5.7: the counter is read fresh anyway
    }
    try (PreparedStatement query = db.prepareStatement("SELECT t.AUTO_INCREMENT FROM information_schema.TABLES t"
        + " JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME"
        + " WHERE t.TABLE_SCHEMA = ? AND t.TABLE_NAME = ? AND c.COLUMN_NAME = ?"
        + " AND c.EXTRA LIKE '%auto_increment%'")) {
      query.setString(1, name.catalog());
      query.setString(2, name.table());
      query.setString(3, column);
      try (ResultSet rs = query.executeQuery()) {
        if (rs.next()) {
          long next = rs.getLong(1);
          return rs.wasNull() ? OptionalLong.empty() : OptionalLong.of(next);
        }
        return OptionalLong.empty();
      }
    }
  }

  /**
   * {@link #table} as the database's metadata names it. MySQL and MariaDB call a database a catalog (their
   * drivers ignore the schema argument), so {@code db.table} is catalog {@code db} there, and a bare name is
   * looked up in the connection's database only, not in every database of the server.
   */
  private record TableName(String catalog, String schema, String table, boolean mysql) {
    static TableName of(String qualified, Connection db) throws SQLException {
      int dot = qualified.indexOf('.');
      String qualifier = dot < 0 ? null : qualified.substring(0, dot);
      String name = dot < 0 ? qualified : qualified.substring(dot + 1);
      String product = db.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
      boolean mysql = product.contains("mysql") || product.contains("mariadb");
      if (mysql) {
        return new TableName(qualifier != null ? qualifier : db.getCatalog(), null, name, true);
      }
      return new TableName(null, qualifier, name, false);
    }
  }

  /**
   * Looks the column up in the database's metadata first: some databases (SQLite) read a quoted name that
   * is no column as a string literal, and MAX of that would be a wrong floor.
   */
  private void checkColumnExists(CommandLine commandLine, Connection db, TableName name) throws SQLException {
    List<String> columns = new ArrayList<>();
    try (ResultSet rs = db.getMetaData().getColumns(name.catalog(), name.schema(), name.table(), "%")) {
      while (rs.next() && columns.size() < 1000) {
        columns.add(rs.getString("COLUMN_NAME"));
      }
    }
    if (columns.isEmpty()) {
      throw new ParameterException(commandLine, "--table " + table + ": no such table in " + jdbcUrl
          + " (names are matched exactly, case included)");
    }
    if (!columns.contains(column)) {
      throw new ParameterException(commandLine, "--column " + column + ": " + table + " has no such column"
          + " (its columns: " + String.join(", ", columns) + ")");
    }
  }

  private static String quoteQualified(String name, String quote) {
    List<String> quoted = new ArrayList<>();
    for (String part : name.split("\\.")) {
      quoted.add(quote + part + quote);
    }
    return String.join(".", quoted);
  }

  private static boolean isInteger(int type) {
    // SQLite reports an aggregate over an INTEGER column as INTEGER, or as NULL over an empty table.
    return type == Types.BIGINT || type == Types.INTEGER || type == Types.SMALLINT || type == Types.TINYINT
        || type == Types.NULL || type == Types.NUMERIC || type == Types.DECIMAL;
  }

  private List<Floors.Row> allocatorRows(CommandLine commandLine, Connection db) throws SQLException {
    String tableName = source == Source.leaf ? "leaf_alloc" : "tiny_id_info";
    String tagColumn = source == Source.leaf ? "biz_tag" : "biz_type";
    List<Floors.Row> result = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    try (Statement statement = db.createStatement();
        ResultSet rs = statement.executeQuery("SELECT " + tagColumn + ", max_id FROM " + tableName
            + " ORDER BY " + tagColumn)) {
      while (rs.next()) {
        String tag = rs.getString(1);
        long maxId = rs.getLong(2);
        String name = map.getOrDefault(tag, namePrefix + tag);
        String where = tableName + " " + tagColumn + "=" + tag;
        String problem = Floors.nameProblem(name);
        if (problem != null) {
          problems.add(where + ": " + problem);
        } else {
          result.add(new Floors.Row(name, maxId, where));
        }
      }
    }
    for (String tag : map.keySet()) {
      if (result.stream().noneMatch(r -> r.source().endsWith("=" + tag))
          && problems.stream().noneMatch(p -> p.contains("=" + tag + ":"))) {
        problems.add("--map " + tag + "=...: no row of " + tableName + " has " + tagColumn + " '" + tag + "'");
      }
    }
    if (!problems.isEmpty()) {
      throw new ParameterException(commandLine, tableName + ": nothing imported, fix these rows first:"
          + System.lineSeparator() + "  " + String.join(System.lineSeparator() + "  ", problems));
    }
    if (result.isEmpty()) {
      throw new ParameterException(commandLine, tableName + " has no rows: nothing to import");
    }
    return result;
  }

  @Override
  void run(Calls calls, Output out) {
    throw new UnsupportedOperationException("execute() runs the import");
  }

  @Override
  int execute(Calls calls, Output out) {
    List<Floors.Result> results = Floors.apply(calls, rows, true, dryRun);
    out.floorResults(results);
    return Floors.exitCode(results);
  }
}
