/** Imported first by suites that search every log line: logging at DEBUG, before any logger is made. */
process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
