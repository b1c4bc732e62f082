import AppleClient
import Logging
import Store

/// Keeps the last good JWKS document in `server_state`, so a restart while Apple is
/// unreachable still verifies tokens.
struct StoredKeySet: KeySetPersistence {
    static let key = "apple_jwks"
    let state: ServerState
    let logger: Logger

    func loadKeySet() -> [UInt8]? {
        try? state.get(Self.key)
    }

    func saveKeySet(_ document: [UInt8]) async {
        do {
            try await state.set(Self.key, document)
        } catch {
            logger.warning("could not persist Apple's keys", metadata: ["error": "\(error)"])
        }
    }
}
