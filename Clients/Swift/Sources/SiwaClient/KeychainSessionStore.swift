#if canImport(Security)
import Foundation
import Security

/// Keeps the state in the Keychain as one generic password item, readable after the device's
/// first unlock and never restored to another device.
public struct KeychainSessionStore: SessionStore {
    public let service: String
    public let account: String
    public let accessGroup: String?

    public init(service: String = "siwa-session", account: String = "default", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    private var query: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func load() async throws -> SiwaClientState {
        var lookup = query
        lookup[kSecReturnData as String] = true
        lookup[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(lookup as CFDictionary, &result)
        if status == errSecItemNotFound { return SiwaClientState() }
        guard status == errSecSuccess, let data = result as? Data else { throw SiwaError.store("Keychain read failed (\(status))") }
        do {
            return try JSONDecoder().decode(SiwaClientState.self, from: data)
        } catch {
            throw SiwaError.store("the Keychain item does not hold a session")
        }
    }

    public func save(_ state: SiwaClientState) async throws {
        let deleted = SecItemDelete(query as CFDictionary)
        guard deleted == errSecSuccess || deleted == errSecItemNotFound else { throw SiwaError.store("Keychain delete failed (\(deleted))") }
        if state.isEmpty { return }
        var item = query
        item[kSecValueData as String] = try JSONEncoder().encode(state)
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let added = SecItemAdd(item as CFDictionary, nil)
        guard added == errSecSuccess else { throw SiwaError.store("Keychain write failed (\(added))") }
    }
}
#endif
