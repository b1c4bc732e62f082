// The application test harness (`withApp`, `TestApp`, `HTTPGet`, `LinesCollector`) and the
// shared waits (`eventually`, `HeldClock`) for every file of this target, written here or on
// another branch, without an import in each.
@_exported import AppTestSupport
@_exported import TestSupport
