import CCommonPasswords

/// The passwords docs/guides/passwords-and-email.md refuses as `weak_password`: the 10,000 most
/// common, from Sources/CCommonPasswords/common-passwords.txt (its source and license are in
/// CommonPasswords.c there), which is compiled into the binary and split into a set at first use.
enum CommonPasswords {
    /// Every entry, lower-cased (all of them are already; the list has no two that differ
    /// only in case).
    static let all: Set<String> = {
        var length = 0
        let bytes = UnsafeBufferPointer(start: siwa_common_passwords(&length), count: length)
        return Set(bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) })
    }()

    static func contains(_ password: String) -> Bool {
        all.contains(password.lowercased())
    }
}
