package dev.idgen.hibernate;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;

/**
 * An in-memory H2 database behind a DataSource that counts what the driver is asked to run for inserts:
 * rows added to a batch, batches run, and inserts run one by one. Thread-safe (atomic counters).
 */
final class CountingDataSource implements DataSource {
  final AtomicInteger insertsBatched = new AtomicInteger();
  final AtomicInteger batchesRun = new AtomicInteger();
  final AtomicInteger insertsRunAlone = new AtomicInteger();
  private final JdbcDataSource h2 = new JdbcDataSource();

  CountingDataSource(String name) {
    h2.setURL("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
  }

  void reset() {
    insertsBatched.set(0);
    batchesRun.set(0);
    insertsRunAlone.set(0);
  }

  @Override
  public Connection getConnection() throws SQLException {
    return counting(h2.getConnection());
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    return counting(h2.getConnection(user, password));
  }

  private Connection counting(Connection connection) {
    return proxy(Connection.class, connection, (p, method, args) -> {
      Object result = call(connection, method, args);
      if (method.getName().equals("prepareStatement") && args[0] instanceof String sql
          && sql.trim().toLowerCase(Locale.ROOT).startsWith("insert")) {
        return statement((PreparedStatement) result);
      }
      return result;
    });
  }

  private PreparedStatement statement(PreparedStatement statement) {
    return proxy(PreparedStatement.class, statement, (p, method, args) -> {
      switch (method.getName()) {
        case "addBatch" -> insertsBatched.incrementAndGet();
        case "executeBatch" -> batchesRun.incrementAndGet();
        case "executeUpdate", "execute", "executeLargeUpdate" -> insertsRunAlone.incrementAndGet();
        default -> { }
      }
      return call(statement, method, args);
    });
  }

  private static Object call(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static <T> T proxy(Class<T> type, T target, InvocationHandler handler) {
    return type.cast(Proxy.newProxyInstance(CountingDataSource.class.getClassLoader(), new Class<?>[] {type},
        handler));
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return h2.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    h2.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    h2.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return h2.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return false;
  }
}
