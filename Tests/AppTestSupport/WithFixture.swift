/// Runs `body` with `fixture` and stops it when `body` returns or throws (Swift has no `await`
/// in `defer`): a failing `try` in a test leaks no server, simulator or database. Applications
/// started inside `body` share the test's slot (`AppSlots.inScope`).
public func withFixture<F: Stoppable, T>(_ fixture: F, _ body: (F) async throws -> T) async throws -> T {
    let result: T
    do {
        result = try await AppSlots.$inScope.withValue(true) { try await body(fixture) }
    } catch {
        await fixture.stop()
        throw error
    }
    await fixture.stop()
    return result
}
