import Glibc
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
        self = try Self.withParts(of: token) { header, payload, signature, signingInput throws(TokenFailure) in
            CompactJWS(header: header, payload: payload, signature: Array(signature), signingInput: Array(signingInput)[...])
        }
    }

    private init(header: JSONObject, payload: JSONObject, signature: [UInt8], signingInput: ArraySlice<UInt8>) {
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = signingInput
    }

    /// Splits and decodes as `init` does, but lends `body` the signature and the signing input
    /// instead of copying them: the three parts decode into one temporary buffer (on the stack
    /// for a token of Apple's size), since this runs for every token verified.
    static func withParts<R>(
        of token: String,
        _ body: (_ header: JSONObject, _ payload: JSONObject, _ signature: UnsafeBufferPointer<UInt8>, _ signingInput: UnsafeBufferPointer<UInt8>) throws(TokenFailure) -> R
    ) throws(TokenFailure) -> R {
        var token = token
        return try token.withUTF8 { bytes in Result { () throws(TokenFailure) -> R in try withParts(of: bytes, body) } }.get()
    }

    private static func withParts<R>(
        of bytes: UnsafeBufferPointer<UInt8>,
        _ body: (JSONObject, JSONObject, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws(TokenFailure) -> R
    ) throws(TokenFailure) -> R {
        guard !bytes.isEmpty, bytes.count <= Self.maxBytes else { throw .malformed }
        guard let firstDot = dot(in: bytes, from: 0), let secondDot = dot(in: bytes, from: firstDot + 1),
              dot(in: bytes, from: secondDot + 1) == nil
        else { throw .malformed }
        let headerText = UnsafeBufferPointer(rebasing: bytes[..<firstDot])
        let payloadText = UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])
        let signatureText = UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...])
        guard let headerCount = Base64.url.decodedCount(headerText), let payloadCount = Base64.url.decodedCount(payloadText),
              let signatureCount = Base64.url.decodedCount(signatureText)
        else { throw .malformed }
        let signingInput = UnsafeBufferPointer(rebasing: bytes[..<secondDot])
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: headerCount + payloadCount + signatureCount) { buffer in
            let headerBytes = UnsafeMutableBufferPointer(rebasing: buffer[..<headerCount])
            let payloadBytes = UnsafeMutableBufferPointer(rebasing: buffer[headerCount..<(headerCount + payloadCount)])
            let signature = UnsafeMutableBufferPointer(rebasing: buffer[(headerCount + payloadCount)...])
            guard Base64.url.decode(headerText, into: headerBytes) != nil, Base64.url.decode(payloadText, into: payloadBytes) != nil,
                  Base64.url.decode(signatureText, into: signature) != nil,
                  let header = try? JSONParser().parse(buffer: UnsafeBufferPointer(headerBytes)).object,
                  let payload = try? JSONParser().parse(buffer: UnsafeBufferPointer(payloadBytes)).object
            else { return Result<R, TokenFailure>.failure(.malformed) }
            return Result { () throws(TokenFailure) -> R in try body(header, payload, UnsafeBufferPointer(signature), signingInput) }
        }.get()
    }

    /// Where the next `.` is at or after `start`.
    private static func dot(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
              let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start)
        else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
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
