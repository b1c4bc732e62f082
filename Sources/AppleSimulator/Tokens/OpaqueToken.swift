import JOSE
import OpenSSLCrypto
import WireFormat

/// Apple's codes and tokens are opaque strings shaped `<hex>.0.<letters>.<base64ish>`
/// (APPLE.md §0). The leading letter tells the simulator's own kinds apart at a glance in logs;
/// clients must never parse them.
enum OpaqueToken {
    case code
    case refreshToken
    case accessToken

    func make() -> String {
        let prefix = switch self {
        case .code: "c"
        case .refreshToken: "r"
        case .accessToken: "a"
        }
        let letters = SecureRandom.bytes(4).map { String(UnicodeScalar(UInt8(ascii: "a") + $0 % 26)) }.joined()
        return prefix + Hex.encode(SecureRandom.bytes(16)) + ".0." + letters + "." + Base64.url.encode(SecureRandom.bytes(24))
    }
}
