// The application test harness (`withApp`, `TestApp`, `HTTPGet`, `LinesCollector`), the
// shared waits (`eventually`, `HeldClock`) and the application's core (`Accounts`) for every
// file of this target, written here or on another branch, without an import in each.
@_exported import AppTestSupport
@_exported import TestSupport
@_exported import Accounts
