import JSON
import OpenSSLCrypto
import WireFormat

/// A JWS in compact form (`header.payload.signature`), split and decoded but not yet trusted.
public struct CompactJWS: Sendable {
    /// Apple's tokens are about 1 KiB; anything over this is refused before any work.
    public static let maxBytes = 16 * 1024

    public let header: JSONObject
    public let payload: JSONObject
    public let signature: [UInt8]
    /// The ASCII bytes that were signed: `base64url(header) "." base64url(payload)`.
    public let signingInput: ArraySlice<UInt8>

    /// Splits and decodes; every way of failing is `malformed` (docs/reference/http-api.md: not three base64url
    /// parts holding JSON objects, or over 16 KiB).
    public init(_ token: String) throws(TokenFailure) {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxBytes else { throw .malformed }
        guard let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
              let secondDot = bytes[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
              !bytes[(secondDot + 1)...].contains(UInt8(ascii: "."))
        else { throw .malformed }
        guard let headerBytes = Base64.url.decode(bytes[..<firstDot]),
              let payloadBytes = Base64.url.decode(bytes[(firstDot + 1)..<secondDot]),
              let signature = Base64.url.decode(bytes[(secondDot + 1)...])
        else { throw .malformed }
        guard let header = try? JSONParser.parse(headerBytes).object,
              let payload = try? JSONParser.parse(payloadBytes).object
        else { throw .malformed }
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = bytes[..<secondDot]
    }

    public var algorithm: String? { header["alg"]?.string }
    public var keyID: String? { header["kid"]?.string }

    /// Builds and signs a token with RS256 (the simulator signs as Apple does).
    public static func signRS256(header: JSONObject, payload: JSONObject, key: RSAPrivateKey) throws -> String {
        let input = Base64.url.encode(JSONWriter.bytes(.object(header))) + "." + Base64.url.encode(JSONWriter.bytes(.object(payload)))
        return input + "." + Base64.url.encode(try key.signRS256(Array(input.utf8)))
    }

    /// Builds and signs a token with ES256 (the client secret).
    public static func signES256(header: JSONObject, payload: JSONObject, key: P256PrivateKey) throws -> String {
        let input = Base64.url.encode(JSONWriter.bytes(.object(header))) + "." + Base64.url.encode(JSONWriter.bytes(.object(payload)))
        return input + "." + Base64.url.encode(try key.signES256(Array(input.utf8)))
    }
}
