package dev.idgen.server.metrics;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * What one class logs at INFO and above during each test, for tests that assert on alarm lines:
 * {@code @RegisterExtension final CapturedLogs logs = new CapturedLogs(SequenceMonitor.class);}. The logger's
 * level is set to INFO for the test and put back after it.
 */
final class CapturedLogs implements BeforeEachCallback, AfterEachCallback {
  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private Level previousLevel;

  CapturedLogs(Class<?> source) {
    this.logger = (Logger) LoggerFactory.getLogger(source);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    appender.list.clear();
    appender.start();
    logger.addAppender(appender);
    previousLevel = logger.getLevel();
    logger.setLevel(Level.INFO);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    logger.detachAppender(appender);
    logger.setLevel(previousLevel);
    appender.stop();
  }

  /** The formatted messages logged at {@code level} that start with {@code prefix}, in order. */
  List<String> messages(Level level, String prefix) {
    return appender.list.stream()
        .filter(e -> e.getLevel() == level)
        .map(ILoggingEvent::getFormattedMessage)
        .filter(m -> m.startsWith(prefix))
        .toList();
  }
}
