@testable import PostgreSQL
import Testing
import TestSupport

struct ConnectionInfoTests {
    @Test func redactsThePasswordAsReadAndAsWritten() throws {
        let info = try ConnectionInfo("postgres://siwa:p%40ss%2Fword@db.example:5432/siwa?sslmode=require")
        #expect(info.redact("failed for p@ss/word and p%40ss%2Fword") == "failed for *** and ***")
        let keywords = try ConnectionInfo("host=db user=siwa password='two words' dbname=siwa")
        #expect(keywords.redact("no: two words") == "no: ***")
    }

    @Test func aMalformedStringIsRefusedWithoutItsPassword() {
        let error = #expect(throws: PostgresError.self) { try ConnectionInfo("postgres://siwa:hunter2%zz@host/db") }
        #expect(error?.isConnectionFailure == true)
        #expect(error?.description.contains("hunter2") == false)
        #expect(error?.message.hasPrefix("invalid connection string") == true)
    }

    @Test func aPoolRefusesAMalformedStringAtOnce() {
        #expect(throws: PostgresError.self) { try PostgresPool("postgres://db.example/siwa?no_such_setting=1") }
    }
}

@Suite(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"), .timeLimit(.minutes(1)))
struct PasswordErrorTests {
    @Test func aRefusedPasswordIsNotInTheError() async throws {
        let cluster = try await PostgresCluster.shared()
        let admin = try PostgresConnection(cluster.url)
        let role = "pw_" + String(UInt32.random(in: 0...UInt32.max))
        try admin.execute("CREATE ROLE \(role) LOGIN PASSWORD 'right-password'")
        let good = try PostgresConnection("postgres://\(role):right-password@127.0.0.1:\(cluster.port)/siwa")
        #expect(try good.queryOne("SELECT current_user")?.string(0) == role)

        let secret = "wrong-Sekr1t"
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection("postgres://\(role):\(secret)@127.0.0.1:\(cluster.port)/siwa")
        }
        #expect(error?.isConnectionFailure == true)
        #expect(error?.message.contains("password authentication failed") == true)
        #expect(error?.description.contains(secret) == false)
        #expect(error?.description.contains("postgres://") == false)
    }
}
