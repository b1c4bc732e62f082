// libFuzzer target for reading Apple's tokens (Sources/JOSE, with Sources/JSON,
// Sources/OpenSSLCrypto and Sources/WireFormat compiled in): base64url, the compact JWS reader
// and the claim reader for identity tokens and notifications (the `events` claim included).
//
// The first byte picks what the rest is fed to:
//   even: a compact JWS (`header.payload.signature`), then its payload to the claim reader;
//   odd:  a JSON payload straight to the claim reader (the signature check would otherwise
//         keep the fuzzer from ever reaching it).
// Properties (a violation traps with fatalError, which libFuzzer records as a crash):
//   1. Base64url has one spelling: whatever decodes encodes back to the same text, and the
//      rest of the input encodes and decodes back to itself. A second spelling of a token
//      would slip past the replay guard, which keys on the token's hash.
//   2. An accepted JWS has exactly two dots, each segment is canonical base64url, and its
//      signing input is the text before the second dot.
//   3. Accepted claims are what a verifier can rely on: a non-empty `sub` when one is
//      required; events with a type and a subject.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    if let decoded = Base64.url.decode(bytes), Array(Base64.url.encode(decoded).utf8) != bytes {
        fatalError("property violated: \(bytes) decodes but is not the canonical spelling")
    }
    if Base64.url.decode(Array(Base64.url.encode(bytes).utf8)) != bytes {
        fatalError("property violated: encoding does not round-trip")
    }

    let payload: JSONObject
    if mode % 2 == 0 {
        guard let text = String(validating: bytes, as: UTF8.self), let token = try? CompactJWS(text) else { return 0 }
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if segments.count != 3 { fatalError("property violated: accepted a JWS with \(segments.count) segments") }
        for segment in segments where Base64.url.decode(segment).map({ Array(Base64.url.encode($0).utf8) }) != Array(segment) {
            fatalError("property violated: a segment is not canonical base64url")
        }
        if Array(token.signingInput) != Array(bytes[..<(segments[0].count + 1 + segments[1].count)]) {
            fatalError("property violated: the signing input is not the text before the second dot")
        }
        payload = token.payload
    } else {
        guard let object = (try? JSONParser.parse(bytes))?.object else { return 0 }
        payload = object
    }

    if let claims = try? AppleClaims(payload, requireSubject: true), claims.subject.isEmpty {
        fatalError("property violated: claims accepted without a subject")
    }
    if let claims = try? AppleClaims(payload, requireSubject: false), let events = claims.events {
        for event in events where event.type.isEmpty || event.subject.isEmpty {
            fatalError("property violated: an event without a type or subject was accepted")
        }
    }
    return 0
}
