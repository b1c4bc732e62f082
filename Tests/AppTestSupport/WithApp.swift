import SiwaApp
import TestSupport

/// Runs `body` against a started application (its own database on `engine`, an Apple ID
/// simulator, the wall clock held by `clock` when given) and stops all three when `body`
/// returns or throws: no server, simulator or database outlives the test.
public func withApp<T>(
    engine: DatabaseEngine = .sqlite, transport: Transport = .inProcess, clock: HeldClock? = nil, drainsInBackground: Bool = true,
    configure: (inout Configuration) -> Void = { _ in }, _ body: (TestApp) async throws -> T
) async throws -> T {
    try await withFixture(
        TestApp(engine: engine, transport: transport, clock: clock, drainsInBackground: drainsInBackground, configure: configure), body)
}
