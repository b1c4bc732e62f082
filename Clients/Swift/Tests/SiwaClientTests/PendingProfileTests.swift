import Foundation
import SiwaClient
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Apple gives the name and email once: a sign-in that fails must not lose them.
@Suite struct PendingProfileTests {
    @Test func theNameSurvivesAFailedFirstPostAndGoesWithTheNext() async throws {
        let server = try await TestServer.shared.value
        let folder = try temporaryFolder()
        let store = FileSessionStore(url: folder.appendingPathComponent("session.json"))
        let sub = TestServer.newSub()
        let name = PersonName(given: "Grace", family: "Hopper")

        // The first post never reaches the server (the phone is offline: nothing listens there).
        let offline = SiwaClient(baseURL: URL(string: "http://127.0.0.1:\(try unusedPort())")!, store: store)
        let first = AppleNonce()
        let credential = try await server.credential(sub: sub, nonce: first, fullName: name, email: "grace@example.com")
        let offlineError = await #expect(throws: SiwaError.self) { try await offline.signIn(with: credential, nonce: first.raw) }
        #expect(offlineError.map { if case .transport = $0 { true } else { false } } == true)
        #expect(try await store.load().pendingProfile == PendingProfile(appleUserID: sub, name: name, email: "grace@example.com"))
        #expect(try await store.load().session == nil)

        // The app launches again and Apple's next credential has no name; the kept one goes with it.
        let client = server.client(store: store)
        let result = try await server.signIn(client, sub: sub)

        #expect(result.created)
        #expect(result.user.name == name)
        #expect(try await store.load().pendingProfile == nil)
        #expect(try await store.load().session?.token == result.session.token)
    }

    @Test func aRefusedSignInKeepsTheNameAndTheServersCode() async throws {
        let server = try await TestServer.shared.value
        let store = MemorySessionStore()
        let client = server.client(store: store)
        let sub = TestServer.newSub()
        let name = PersonName(given: "Katherine", family: "Johnson")

        // A token issued to an app this server does not serve: 401 invalid_token, wrong_audience.
        let nonce = AppleNonce()
        let foreign = try await server.credential(sub: sub, nonce: nonce, fullName: name, clientID: "com.example.other")
        let refusal = await #expect(throws: SiwaError.self) { try await client.signIn(with: foreign, nonce: nonce.raw) }
        #expect(refusal == .server(status: 401, code: .invalidToken, description: "wrong_audience", retryAfter: nil))
        #expect(await store.load().pendingProfile?.name == name)

        // Another Apple ID's sign-in does not carry it.
        let stranger = try await server.signIn(client)
        #expect(stranger.user.name == nil)
        #expect(await store.load().pendingProfile?.appleUserID == sub)

        let result = try await server.signIn(client, sub: sub)
        #expect(result.user.name == name)
        #expect(await store.load().pendingProfile == nil)
    }
}

func temporaryFolder() throws -> URL {
    let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("siwa-client-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    ExitCleanup.remove(folder)
    return folder
}

/// A loopback port nothing listens on (bound, read, released).
func unusedPort() throws -> UInt16 {
    #if canImport(Glibc)
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { throw SiwaTestFailure("no free port") }
    return UInt16(bigEndian: address.sin_port)
}
