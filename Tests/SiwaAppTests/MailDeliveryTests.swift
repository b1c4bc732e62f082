import Foundation
import Logging
import MailTemplates
import OpenSSLCrypto
import SMTP
@testable import Store
import Synchronization
import Testing
import TestSupport
import WireFormat
@testable import SiwaApp

/// The mail outbox delivered (docs/guides/passwords-and-email.md) to aiosmtpd, an SMTP server written by others, with
/// STARTTLS and AUTH, and what arrived read back by Python's `email` package: headers, parts,
/// charset, the link, the language, the Message-ID the same after a retry; retries on a
/// refused connection and a 4xx, failure at once on a 5xx to `RCPT TO`, `email retry`; no
/// message lost by a worker that dies after the commit; two instances on one PostgreSQL
/// database sending each message once. Times are held, so back-off is stepped over, not waited.
@Suite(.enabled(if: PythonTools.testsEnabled), .timeLimit(.minutes(3)))
struct MailDeliveryTests {
    typealias Engine = DatabaseEngine

    static let user = "mailer@siwa.example.com"
    static let password = "p@ss:w/rd 비밀"
    static let key = [UInt8](repeating: 0x42, count: 32)

    static let start: Int64 = 1_796_119_200

    /// A fresh folder for a SQLite database, removed afterwards.
    static func withTemporaryFolder<T>(_ body: (String) async throws -> T) async throws -> T {
        let folder = NSTemporaryDirectory() + "siwa-mail-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try await body(folder)
    }

    static func store(_ location: String) throws -> Store {
        try Store.open(location, connections: 4, mail: MailSettings(messageIDDomain: "siwa.example.com")) { key }
    }

    static func location(_ engine: Engine, folder: String) async throws -> String {
        engine == .postgres ? try await PostgresCluster.shared().makeDatabase() : folder + "/siwa.sqlite3"
    }

    static func deliverer(_ store: Store, port: UInt16, caPEM: String? = nil, clock: HeldClock, metrics: MailMetrics = MailMetrics()) throws -> MailDeliverer {
        let url = try SMTPURL("smtp://\(FormURLEncoding.escape(user)):\(FormURLEncoding.escape(password))@127.0.0.1:\(port)")
        let client = try SMTPClient(configuration: SMTPConfiguration(url: url, extraCAPEM: caPEM, trustOnlyExtraCAs: caPEM != nil))
        return MailDeliverer(
            queue: store.mail, client: client, from: try MailAddress(parsing: "Siwa 시와 <noreply@siwa.example.com>"),
            publicURL: "https://siwa.example.com", retention: 86_400, metrics: metrics, logger: Logger(label: "mail-test"), clock: clock.read)
    }

    /// A password account for `email` in `locale`, whose sign-up writes its `verify_email`
    /// message with `code`.
    @discardableResult
    static func signUp(_ store: Store, _ email: String, code: String, locale: String = "en", now: Int64) async throws -> String {
        var signUp = PasswordSignUp(
            email: email, hash: "$scrypt$h", sessionTTL: 86_400,
            verification: EmailCode(kind: .verifyEmail, code: code, codeHash: SHA256.hash(code), expiresAt: now + 86_400))
        signUp.locale = locale
        return try await store.createPasswordUser(signUp, now: now).user.id
    }

    @Test(arguments: Engine.available)
    func aKoreanUsersCodeArrivesInKoreanWithItsLinkAndOneMessageIDAcrossARetry(_ engine: Engine) async throws {
        try await Self.withTemporaryFolder { folder in
            let server = try await AiosmtpdServer(user: Self.user, password: Self.password)
            let store = try Self.store(try await Self.location(engine, folder: folder))
            defer { store.close() }
            let clock = HeldClock(Self.start)
            let code = "S29yZWFuLWNvZGUtZm9yLWtpbQ"
            try await Self.signUp(store, "kim@example.com", code: code, locale: "ko", now: clock.read())
            let stored = try #require(try await store.mail.claimDue(now: clock.read(), lease: 0, limit: 1).first)

            // Nobody listens: a connection error, retried after the back-off. Port 1, which no test
            // binds: a port found free may be taken by another test before the attempt (the suite
            // runs all at once).
            let metrics = MailMetrics()
            let refused = try Self.deliverer(store, port: 1, clock: clock, metrics: metrics)
            #expect(try await refused.deliverDue() == 1)
            #expect(metrics.count(kind: "verify_email", outcome: "retry") == 1)
            #expect(try await store.mail.hasDue(now: clock.read()) == false)
            let failure = try await store.engine.read { try $0.queryOne("SELECT attempts, last_error FROM mail_messages") }
            #expect(try failure?.int("attempts") == 1)
            #expect(try failure?.string("last_error").contains("could not connect") == true)
            #expect(try failure?.string("last_error").contains(code) == false)

            clock.advance(by: 10)
            let deliverer = try Self.deliverer(store, port: server.port, caPEM: server.caPEM, clock: clock, metrics: metrics)
            #expect(try await deliverer.deliverDue() == 1)
            #expect(metrics.count(kind: "verify_email", outcome: "delivered") == 1)
            #expect(try await store.mail.depth().count == 0, "an accepted message's row is gone")

            let arrived = try await server.message(1)
            #expect(arrived["tls"] as? Bool == true && arrived["authenticated"] as? Bool == true)
            #expect(arrived["defects"] as? [String] == [])
            #expect(arrived["mail_from"] as? String == "noreply@siwa.example.com")
            #expect(arrived["rcpt_tos"] as? [String] == ["kim@example.com"])
            #expect(arrived["from"] as? [[String: String]] == [["name": "Siwa 시와", "address": "noreply@siwa.example.com"]])
            #expect(arrived["message_id"] as? String == "<\(stored.messageID)>", "the Message-ID chosen when it was written")
            #expect(arrived["header_names"] as? [String] == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"])
            let expected = try MailTemplates.render(.verifyEmail, language: .ko, values: [
                "link": "https://siwa.example.com/verify-email?code=\(code)", "code": code,
                "expires_at": MailDeliverer.readableTime(stored.createdAt + 86_400),
            ])
            #expect(arrived["subject"] as? String == expected.subject)
            #expect(expected.subject.unicodeScalars.contains { (0xAC00...0xD7A3).contains($0.value) }, "the subject is Korean")
            let parts = try #require(arrived["parts"] as? [[String: Any]])
            #expect(parts.map { $0["type"] as? String } == ["text/plain", "text/html"])
            #expect(parts.map { $0["charset"] as? String } == ["utf-8", "utf-8"])
            let contents = parts.map { ($0["content"] as? String ?? "").replacing("\r\n", with: "\n") }
            #expect(contents == [expected.text, expected.html])
            #expect(contents[0].contains("https://siwa.example.com/verify-email?code=\(code)"))
            #expect(contents[1].contains("https://siwa.example.com/verify-email?code=\(code)"))
        }
    }

    @Test(arguments: Engine.available)
    func a5xxToRCPTFailsAtOnceA4xxIsRetriedAndRetryQueuesAgain(_ engine: Engine) async throws {
        try await Self.withTemporaryFolder { folder in
            let server = try await AiosmtpdServer(user: Self.user, password: Self.password)
            let store = try Self.store(try await Self.location(engine, folder: folder))
            defer { store.close() }
            let clock = HeldClock(Self.start)
            try await Self.signUp(store, "refuse-550@example.com", code: "c1", now: clock.read())
            try await Self.signUp(store, "refuse-451@example.com", code: "c2", now: clock.read())
            try await Self.signUp(store, "ada@example.com", code: "c3", now: clock.read())
            let metrics = MailMetrics()
            let deliverer = try Self.deliverer(store, port: server.port, caPEM: server.caPEM, clock: clock, metrics: metrics)
            #expect(try await deliverer.deliverDue() == 3)
            // One message's refusal is its own: the others in the batch went on.
            let arrived = try await server.message(1)
            #expect(arrived["rcpt_tos"] as? [String] == ["ada@example.com"])
            #expect(metrics.count(kind: "verify_email", outcome: "failed") == 1)
            #expect(metrics.count(kind: "verify_email", outcome: "retry") == 1)
            #expect(metrics.count(kind: "verify_email", outcome: "delivered") == 1)

            let failed = try await store.mail.failed()
            #expect(failed.map(\.recipient) == ["refuse-550@example.com"])
            #expect(failed.first?.lastError?.contains("550") == true && failed.first?.attempts == 1)
            #expect(try await store.mail.depth().count == 1, "the 451 waits for its retry")

            // Retried after the back-off, refused again; the 550 one stays failed until queued again.
            clock.advance(by: 10)
            #expect(try await deliverer.deliverDue() == 1)
            #expect(metrics.count(kind: "verify_email", outcome: "retry") == 2)
            #expect(try await store.mail.requeue(id: try #require(failed.first).id, now: clock.read()))
            #expect(try await store.mail.failed().isEmpty)
            #expect(try await store.mail.claimDue(now: clock.read(), lease: 30, limit: 5).map(\.recipient) == ["refuse-550@example.com"])
            #expect(server.hasMessage(2) == false)
        }
    }

    /// The worker dies (kill -9) after the change committed: before claiming, or holding a
    /// claim mid-attempt. A new store and deliverer (the restarted process) sends each message,
    /// the claimed one once its lease has passed.
    @Test(arguments: Engine.available)
    func aMessageCommittedBeforeTheWorkerDiedIsSentByTheNextOne(_ engine: Engine) async throws {
        try await Self.withTemporaryFolder { folder in
            let server = try await AiosmtpdServer(user: Self.user, password: Self.password)
            let location = try await Self.location(engine, folder: folder)
            let clock = HeldClock(Self.start)
            do {
                let dying = try Self.store(location)
                try await Self.signUp(dying, "ada@example.com", code: "c1", now: clock.read())
                try await Self.signUp(dying, "bob@example.com", code: "c2", now: clock.read())
                // Bob's message is claimed by the worker that then dies.
                let claimed = try await dying.mail.claimDue(now: clock.read(), lease: MailDeliverer.lease, limit: 1)
                #expect(claimed.count == 1)
                dying.close()
            }
            let store = try Self.store(location)
            defer { store.close() }
            let deliverer = try Self.deliverer(store, port: server.port, caPEM: server.caPEM, clock: clock)
            #expect(try await deliverer.deliverDue() == 1, "the unclaimed message at once")
            clock.advance(by: MailDeliverer.lease)
            #expect(try await deliverer.deliverDue() == 1, "the claimed one once its lease has passed")
            let recipients = [try await server.message(1), try await server.message(2)].compactMap { $0["rcpt_tos"] as? [String] }
            #expect(Set(recipients.flatMap { $0 }) == ["ada@example.com", "bob@example.com"])
            #expect(try await store.mail.depth().count == 0)
        }
    }

    /// Two instances on one PostgreSQL database, each with its deliverer, working at once:
    /// every message arrives once.
    @Test(.enabled(if: Engine.available.contains(.postgres)))
    func twoPostgresInstancesDeliverEachMessageOnce() async throws {
        let server = try await AiosmtpdServer(user: Self.user, password: Self.password)
        let url = try await PostgresCluster.shared().makeDatabase()
        let first = try Self.store(url)
        defer { first.close() }
        let second = try Self.store(url)
        defer { second.close() }
        let clock = HeldClock(Self.start)
        let count = 40
        for index in 0..<count { try await Self.signUp(first, "u\(index)@example.com", code: "c\(index)", now: clock.read()) }
        let deliverers = [
            try Self.deliverer(first, port: server.port, caPEM: server.caPEM, clock: clock),
            try Self.deliverer(second, port: server.port, caPEM: server.caPEM, clock: clock),
        ]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for deliverer in deliverers {
                group.addTask { while try await deliverer.deliverDue() > 0 {} }
            }
            try await group.waitForAll()
        }
        var recipients: [String] = []
        for number in 1...count { recipients += try await server.message(number)["rcpt_tos"] as? [String] ?? [] }
        #expect(Set(recipients).count == count)
        #expect(server.hasMessage(count + 1) == false, "no message sent twice")
        #expect(try await first.mail.depth().count == 0)
    }
}
