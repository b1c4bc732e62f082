// Vapor 4 + vapor/jwt: POST /verify takes siwa-server's sign-in body and verifies its
// identity_token as Apple's with JWTKit: signature, issuer https://appleid.apple.com, audience,
// expiry. No user, no session, no database: the bench compares siwa-server's whole committed
// sign-in with this. Two ways, chosen by VERIFY_MODE:
//   cached    the JWKS fetched once at start into app.jwt.keys; each request verifies with
//             req.jwt.verify(_:as:expectedAudience:), as a Vapor app that caches Apple's keys would.
//             The fair comparison.
//   endpoint  req.jwt.apple.verify, Vapor out of the box: its EndpointCache.get(on:) downloads the
//             JWKS again on every call (vapor 4.122.3), so each verify also fetches the keys.
// Usage: PORT=… JWKS_URL=http://127.0.0.1:…/auth/keys AUDIENCE=com.example.app VERIFY_MODE=cached verify-vapor
// Loopback only.
import JWT
import Vapor

struct SignInBody: Content {
    let identity_token: String
}

enum VerifyMode: String {
    case cached, endpoint
}

let environment = ProcessInfo.processInfo.environment
let port = environment["PORT"].flatMap(Int.init) ?? 8080
guard let jwksURL = environment["JWKS_URL"], let audience = environment["AUDIENCE"] else {
    fatalError("verify-vapor: set JWKS_URL and AUDIENCE")
}
guard let mode = VerifyMode(rawValue: environment["VERIFY_MODE"] ?? "") else {
    fatalError("verify-vapor: set VERIFY_MODE to cached or endpoint")
}

let env = Environment(name: "production", arguments: ["verify-vapor"])
let app = try await Application.make(env)
app.logger.logLevel = .warning
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = port

switch mode {
case .cached:
    let response = try await app.client.get(URI(string: jwksURL)).get()
    guard response.status == .ok else { fatalError("verify-vapor: GET \(jwksURL) answered \(response.status)") }
    try await app.jwt.keys.add(jwks: response.content.decode(JWKS.self))
    app.post("verify") { request async throws -> String in
        let body = try request.content.decode(SignInBody.self)
        // AppleIdentityToken.verify(using:) checks the issuer and the expiry; the audience is checked here.
        let token = try await request.jwt.verify(body.identity_token, as: AppleIdentityToken.self, expectedAudience: audience)
        return token.subject.value
    }
case .endpoint:
    app.jwt.apple.jwksEndpoint = URI(string: jwksURL)
    app.jwt.apple.applicationIdentifier = audience
    app.post("verify") { request async throws -> String in
        let body = try request.content.decode(SignInBody.self)
        let token = try await request.jwt.apple.verify(body.identity_token)
        return token.subject.value
    }
}
app.get("healthz") { _ in "ok" }

try await app.execute()
try await app.asyncShutdown()
