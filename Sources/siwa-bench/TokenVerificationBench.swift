// Identity-token verification on one thread: the whole of `TokenVerifier.verify` (split,
// base64url, JSON, header rules, RSA, claim rules) against the bare RS256 signature check on
// the same token, so the cost of everything but RSA shows as a percentage, and against the loop
// `openssl speed` times (OpenSSLSpeedLoop), all three taking turns.
import Glibc
import JOSE
import JSON
import OpenSSLCrypto
import WireFormat

/// This thread's CPU time. `openssl speed`, the reference, divides by CPU user time (unless
/// `-elapsed`), so time taken by other processes on the same core counts against neither figure.
func seconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Runs `body` repeatedly for about `duration` seconds of CPU time; returns operations per second.
func rate(for duration: Double, _ body: () -> Bool) -> Double {
    var count = 0
    let start = seconds()
    var elapsed = 0.0
    while elapsed < duration {
        for _ in 0..<200 { precondition(body(), "verification failed during the benchmark") }
        count += 200
        elapsed = seconds() - start
    }
    return Double(count) / elapsed
}

/// Runs `bodies` in turn, a batch of 200 each, until each has had about `duration` seconds, so
/// that all meet the same machine (other processes come and go on a shared one); returns each
/// one's operations per second.
func rates(for duration: Double, _ bodies: [() -> Bool]) -> [Double] {
    var count = 0
    var elapsed = [Double](repeating: 0, count: bodies.count)
    while elapsed.contains(where: { $0 < duration }) {
        for (index, body) in bodies.enumerated() {
            let start = seconds()
            for _ in 0..<200 { precondition(body(), "verification failed during the benchmark") }
            elapsed[index] += seconds() - start
        }
        count += 200
    }
    return elapsed.map { Double(count) / $0 }
}

/// Prints `name value` lines for Scripts/bench.
func runVerificationBench(duration: Double) throws {
    let key = try RSAPrivateKey.generate()
    let now: Int64 = 1_800_000_000
    let claims = JSONObject([
        ("iss", .string("https://appleid.apple.com")), ("aud", .string("com.example.app")), ("exp", .integer(now + 600)),
        ("iat", .integer(now)), ("sub", .string("001234.0123456789abcdef0123456789abcdef.0123")),
        ("c_hash", .string(TokenVerifier.codeHash("code"))), ("nonce", .string("raw-nonce")),
        ("email", .string("abc123xyz@privaterelay.appleid.com")), ("email_verified", .string("true")),
        ("is_private_email", .string("true")), ("auth_time", .integer(now)), ("nonce_supported", .bool(true)),
        ("real_user_status", .integer(2)),
    ])
    let token = try CompactJWS.signRS256(header: JSONObject([("kid", .string("W6WcOKB")), ("alg", .string("RS256"))]), payload: claims, key: key)
    let publicKey = key.publicKey
    let policy = TokenVerifier.Policy(
        kind: .identityToken, audiences: ["com.example.app", "com.example.web"],
        nonce: .check(expected: "raw-nonce", requireNonce: true), authorizationCode: "code")
    let parts = token.split(separator: ".")
    let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    let signature = Base64.url.decode(String(parts[2]))!

    // Warm up both paths once.
    _ = publicKey.verifyRS256(signature: signature, message: signingInput)
    _ = try TokenVerifier.verify(token, keys: { _ in publicKey }, policy: policy, now: now)

    let speedLoop = try OpenSSLSpeedLoop()
    _ = speedLoop.verify()

    let measured = rates(for: duration, [
        { publicKey.verifyRS256(signature: signature, message: signingInput) },
        {
            // Not `try? … != nil`: that goes through Optional's generic comparison, copying the
            // result through its value witnesses, which no caller of the verifier does.
            do {
                _ = try TokenVerifier.verify(token, keys: { $0 == "W6WcOKB" ? publicKey : nil }, policy: policy, now: now)
                return true
            } catch {
                return false
            }
        },
        { speedLoop.verify() },
    ])
    let (bare, full, openssl) = (measured[0], measured[1], measured[2])
    let overhead = (bare / full - 1) * 100
    print("token_bytes \(token.utf8.count)")
    print("bare_rs256_verify_per_second \(Int(bare))")
    print("full_token_verify_per_second \(Int(full))")
    print("openssl_speed_loop_per_second \(Int(openssl))")
    print("overhead_percent \(Double(Int(overhead * 10)) / 10)")

    // Where the rest goes: the parts of verification that are not RSA.
    let parseOnly = rate(for: duration / 2) { (try? CompactJWS(token)) != nil }
    let hashOnly = rate(for: duration / 2) { SHA256.hash(signingInput).count == 32 }
    print("compact_parse_per_second \(Int(parseOnly))")
    print("sha256_signing_input_per_second \(Int(hashOnly))")
    let payloadPart = Array(parts[1].utf8)
    let payloadJSON = Base64.url.decode(payloadPart)!
    let base64Only = rate(for: duration / 2) { Base64.url.decode(payloadPart) != nil }
    let jsonOnly = rate(for: duration / 2) { (try? JSONParser.parse(payloadJSON)) != nil }
    print("base64url_payload_per_second \(Int(base64Only))")
    print("json_payload_per_second \(Int(jsonOnly))")
    let claimedCodeHash = TokenVerifier.codeHash("code")
    let codeHashOnly = rate(for: duration / 2) { TokenVerifier.codeHashMatches(claimedCodeHash, code: "code") }
    print("c_hash_per_second \(Int(codeHashOnly))")
}
