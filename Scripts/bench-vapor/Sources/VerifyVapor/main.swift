// Vapor 4 + vapor/jwt: POST /verify takes siwa-server's sign-in body and verifies its
// identity_token as Apple's (signature, issuer, audience, expiry) with JWTKit, the JWKS fetched
// once and cached by vapor/jwt, as a Vapor app that checks Sign in with Apple would. No user,
// no session, no database: the bench compares siwa-server's whole committed sign-in with this.
// Usage: PORT=… JWKS_URL=http://127.0.0.1:…/auth/keys AUDIENCE=com.example.app verify-vapor
// Loopback only.
import JWT
import Vapor

struct SignInBody: Content {
    let identity_token: String
}

let environment = ProcessInfo.processInfo.environment
let port = environment["PORT"].flatMap(Int.init) ?? 8080
guard let jwksURL = environment["JWKS_URL"], let audience = environment["AUDIENCE"] else {
    fatalError("verify-vapor: set JWKS_URL and AUDIENCE")
}

var env = Environment(name: "production", arguments: ["verify-vapor"])
let app = try await Application.make(env)
app.logger.logLevel = .warning
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = port
app.jwt.apple.jwksEndpoint = URI(string: jwksURL)
app.jwt.apple.applicationIdentifier = audience

app.post("verify") { request async throws -> String in
    let body = try request.content.decode(SignInBody.self)
    let token = try await request.jwt.apple.verify(body.identity_token)
    return token.subject.value
}
app.get("healthz") { _ in "ok" }

try await app.execute()
try await app.asyncShutdown()
