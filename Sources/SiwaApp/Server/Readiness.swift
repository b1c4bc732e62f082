import AppleClient
import Store

/// What `/readyz` checks: each failing check adds its reason (docs/guides/operating.md: `database`, `keys`).
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
