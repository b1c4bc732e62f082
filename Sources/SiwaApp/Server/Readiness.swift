import AppleClient
import SQLite

/// What `/readyz` checks: each failing check adds its reason (SPEC §7: `database`, `keys`).
struct Readiness: Sendable {
    let database: Database
    let keys: KeySetCache

    func reasons() -> [String] {
        var reasons: [String] = []
        if !database.ping() { reasons.append("database") }
        // Fresh or persisted: either lets tokens be verified.
        if !keys.isLoaded { reasons.append("keys") }
        return reasons
    }
}
