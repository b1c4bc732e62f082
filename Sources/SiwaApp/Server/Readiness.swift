import AppleClient
import Store

/// What `/readyz` checks: each failing check adds its reason (SPEC §7: `database`, `keys`).
struct Readiness: Sendable {
    let store: Store
    let keys: KeySetCache

    func reasons() async -> [String] {
        var reasons: [String] = []
        if await !store.ping() { reasons.append("database") }
        // Fresh or persisted: either lets tokens be verified.
        if !keys.isLoaded { reasons.append("keys") }
        return reasons
    }
}
