import Foundation
import SiwaClient
import Testing

/// The return-to-app sign-in (PKCE): the browser part is played here over HTTP, as a browser
/// and Apple's consent page would: the login redirect, Apple's form_post to the callback, and
/// the redirect back to the app's URL with a one-time code.
@Suite struct ReturnToAppTests {
    @Test func theCodeTheBrowserBringsBackBecomesASession() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let sub = TestServer.newSub()
        let signIn = client.returnToAppSignIn(returnTo: URL(string: "com.example.app:/signed-in")!)
        #expect(signIn.url.absoluteString.contains("code_challenge=\(signIn.challenge)"))

        let callback = try await Self.browse(signIn, server: server, sub: sub)
        let result = try await client.exchange(callbackURL: callback, signIn: signIn)

        #expect(result.user.appleSub == sub)
        #expect(try await client.session?.token == result.session.token)
        #expect(try await client.me().id == result.user.id)
    }

    @Test func aWrongVerifierIsRefusedAndUsesTheCodeUp() async throws {
        let server = try await TestServer.shared.value
        let client = server.client()
        let signIn = client.returnToAppSignIn(returnTo: URL(string: "com.example.app:/signed-in")!)
        let callback = try await Self.browse(signIn, server: server, sub: TestServer.newSub())
        let code = try #require(signIn.code(in: callback))
        let stolen = client.returnToAppSignIn(returnTo: signIn.returnTo)

        let refused = await #expect(throws: SiwaError.self) { try await client.exchange(code: code, verifier: stolen.verifier) }
        #expect(refused?.code == .invalidGrant)
        let spent = await #expect(throws: SiwaError.self) { try await client.exchange(code: code, verifier: signIn.verifier) }
        #expect(spent?.code == .invalidGrant)
        #expect(try await client.session == nil)
    }

    @Test func aReturnURLWithoutACodeIsRefusedBeforeAnythingIsSent() async throws {
        let store = MemorySessionStore()
        // Nothing listens at this address: a request would fail as .transport, not .invalidInput.
        let client = SiwaClient(baseURL: URL(string: "http://127.0.0.1:\(try unusedPort())")!, store: store)
        let signIn = client.returnToAppSignIn(returnTo: URL(string: "com.example.app:/signed-in")!)
        for callback in ["com.example.app:/signed-in", "com.example.app:/signed-in?code=", "https://evil.example/signed-in?code=abc"] {
            let error = await #expect(throws: SiwaError.self) { try await client.exchange(callbackURL: URL(string: callback)!, signIn: signIn) }
            #expect(error.map { if case .invalidInput = $0 { true } else { false } } == true, "\(callback)")
        }
        #expect(await store.load() == SiwaClientState())
    }

    /// The browser's part: opens the login URL, lets "Apple" answer the callback with a code and
    /// token for the web client, and returns the URL the server sends the browser back to.
    static func browse(_ signIn: ReturnToAppSignIn, server: TestServer, sub: String) async throws -> URL {
        let transport = URLSessionTransport()
        let login = try await transport.send(HTTPTransportRequest(method: "GET", url: signIn.url))
        #expect(login.status == 302)
        let authorize = try #require(login.headers["location"].flatMap { URLComponents(string: $0) })
        func field(_ name: String) -> String { authorize.queryItems?.first { $0.name == name }?.value ?? "" }
        let binding = try #require(login.headers["set-cookie"]?.split(separator: ";").first.map(String.init))

        let answer = try await TestServer.raw(
            "POST", server.simulatorURL.appendingPathComponent("sim/codes"),
            json: ["sub": sub, "client_id": field("client_id"), "nonce": field("nonce"), "redirect_uri": field("redirect_uri")])
        let issued = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: String])
        var form = URLComponents()
        form.queryItems = [
            URLQueryItem(name: "code", value: issued["code"]), URLQueryItem(name: "id_token", value: issued["id_token"]),
            URLQueryItem(name: "state", value: field("state")),
        ]
        let body = (form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let back = try await transport.send(
            HTTPTransportRequest(
                method: "POST", url: server.baseURL.appendingPathComponent("auth/apple/callback"),
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Cookie": binding], body: Data(body.utf8)))
        #expect(back.status == 303)
        return try #require(back.headers["location"].flatMap { URL(string: $0) })
    }
}
