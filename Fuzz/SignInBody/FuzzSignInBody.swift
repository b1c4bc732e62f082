// libFuzzer target for the typed reading of the native sign-in body
// (Sources/SiwaApp/HTTP/API/SignInRequestBody.swift, HTTP/API/AppleUserObject.swift,
// Sources/Accounts/Support/StoredText.swift over Sources/JSON): what a mobile client posts to /api/auth/apple.
//
// Properties (a violation traps with fatalError, which libFuzzer records as a crash):
//   1. Accepted only when the bytes are a JSON object with a non-empty string identity_token.
//   2. Every string it keeps from the client is at most 256 bytes of UTF-8 and a prefix, scalar
//      by scalar, of what the client sent (never a mangled or re-combined string).
//   3. Refusals are typed: no other error escapes.

private func isScalarPrefix(_ kept: String, of sent: String?) -> Bool {
    guard let sent else { return false }
    return kept.unicodeScalars.elementsEqual(sent.unicodeScalars.prefix(kept.unicodeScalars.count))
}

private func check(_ kept: String?, sent: JSONValue?) {
    guard let kept else { return }
    if kept.utf8.count > StoredText.maxBytes { fatalError("property violated: kept \(kept.utf8.count) bytes") }
    if !isScalarPrefix(kept, of: sent?.string) { fatalError("property violated: kept a string that is not a prefix of the sent one") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignInBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let object = (try? JSONParser.parse(bytes))?.object
    let body: SignInRequestBody
    do {
        body = try SignInRequestBody(parsing: bytes)
    } catch {
        if error.description.isEmpty { fatalError("property violated: a refusal without a reason") }
        return 0
    }
    guard let object, let token = object["identity_token"]?.string, token == body.identityToken, !token.isEmpty else {
        fatalError("property violated: accepted without a JSON object holding a non-empty identity_token")
    }
    check(body.deviceName, sent: object["device_name"])
    let name = object["user"]?.object?["name"]?.object
    check(body.user?.givenName, sent: name?["firstName"])
    check(body.user?.familyName, sent: name?["lastName"])
    check(body.user?.email, sent: object["user"]?.object?["email"])
    return 0
}
