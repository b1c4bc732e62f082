import AppleSimulator
import Glibc
import HTTPClient
import JOSE
import JSON
import OpenSSLCrypto
import Testing
import TestSupport
import WireFormat

/// The simulator playing both teams of an app transfer (APPLE.md §8, docs/guides/team-transfer.md): the team
/// token, `auth/usermigrationinfo` both ways with Apple's errors, `/sim/transfer`, tokens that
/// carry `transfer_sub` for 60 days, and `/sim/clock` to get past them.
@Suite struct UserMigrationTests {
    static let app = "com.example.app"
    static let ada = "000111.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.0001"
    static let bob = "000222.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.0002"
    static let teamB = "TEAMBBBB01"

    /// A team's way to talk to the simulator: its client secrets and its migration calls.
    struct TeamClient {
        let harness: SimulatorHarness
        let teamID: String
        let minter: ClientSecretMinter

        init(_ harness: SimulatorHarness, team: SimulatorTeam) throws {
            self.harness = harness
            teamID = team.teamID
            minter = ClientSecretMinter(teamID: team.teamID, keyID: team.keyID, key: try P256PrivateKey(pem: team.developerKeyPEM))
        }

        /// The configured team.
        init(_ harness: SimulatorHarness) {
            self.harness = harness
            teamID = harness.simulator.teamID
            minter = harness.minter
        }

        /// Minted on the simulator's clock, as a server whose clock agrees with Apple's would.
        func secret(_ clientID: String = UserMigrationTests.app) throws -> String { try minter.mint(for: clientID, now: harness.simulator.now) }

        func teamToken(_ clientID: String = UserMigrationTests.app, scope: String = "user.migration") async throws -> HTTPClientResponse {
            try await harness.postForm("/auth/token", [
                ("grant_type", "client_credentials"), ("scope", scope), ("client_id", clientID), ("client_secret", try secret(clientID)),
            ])
        }

        func accessToken() async throws -> String {
            let response = try await teamToken()
            #expect(response.status == 200, "\(response.text)")
            return try #require(try response.jsonObject()["access_token"]?.string)
        }

        func migrate(_ fields: [(String, String)], bearer: String?, clientID: String = UserMigrationTests.app) async throws -> HTTPClientResponse {
            var headers = [("Content-Type", "application/x-www-form-urlencoded")]
            if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
            return try await harness.client.send(
                HTTPClientRequest(
                    method: "POST", url: harness.baseURL + "/auth/usermigrationinfo", headers: headers,
                    body: FormURLEncoding.encode(fields + [("client_id", clientID), ("client_secret", try secret(clientID))])),
                idempotent: false)
        }

        /// The sender's call: the user's `transfer_sub` for `target`.
        func transferSub(sub: String, target: String, bearer: String) async throws -> HTTPClientResponse {
            try await migrate([("sub", sub), ("target", target)], bearer: bearer)
        }

        /// The recipient's call.
        func exchange(_ transferSub: String, bearer: String) async throws -> HTTPClientResponse {
            try await migrate([("transfer_sub", transferSub)], bearer: bearer)
        }
    }

    static func claims(_ token: String) throws -> JSONObject { try CompactJWS(token).payload }

    @Test func theClientCredentialsGrantGivesATeamTokenAndNothingElse() async throws {
        try await withSimulator { harness in
            let teamA = TeamClient(harness)
            let response = try await teamA.teamToken()
            #expect(response.status == 200, "\(response.text)")
            let body = try response.jsonObject()
            #expect(body.keys == ["access_token", "token_type", "expires_in"])
            #expect(body["token_type"]?.string == "Bearer")
            #expect(body["expires_in"]?.integer == 3600)

            let wrongScope = try await teamA.teamToken(scope: "name email")
            #expect(wrongScope.status == 400)
            #expect(wrongScope.errorCode == "invalid_scope")
            // Client authentication exactly as for the other grants.
            let foreign = ClientSecretMinter(teamID: harness.simulator.teamID, keyID: harness.simulator.keyID, key: try P256PrivateKey.generate())
            let refused = try await harness.postForm("/auth/token", [
                ("grant_type", "client_credentials"), ("scope", "user.migration"), ("client_id", Self.app),
                ("client_secret", try foreign.mint(for: Self.app, now: harness.clock.now)),
            ])
            #expect(refused.status == 400)
            #expect(refused.errorCode == "invalid_client")
        }
    }

    @Test func theSenderGetsOneTransferSubPerUserAndRecipientTeam() async throws {
        try await withSimulator { harness in
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: Self.app)
            let teamA = TeamClient(harness)
            let token = try await teamA.accessToken()
            let first = try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: token)
            #expect(first.status == 200, "\(first.text)")
            #expect(try first.jsonObject().keys == ["transfer_sub"])
            let transferSub = try #require(try first.jsonObject()["transfer_sub"]?.string)
            let parts = transferSub.split(separator: ".")
            #expect(parts.count == 3 && parts[0].count == 6 && parts[1].count == 32 && parts[2].count == 4, "Apple's 760417.ebbf…1827 shape")
            #expect(transferSub != Self.ada)

            let again = try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: token)
            #expect(try again.jsonObject()["transfer_sub"]?.string == transferSub, "stable per (user, recipient team)")
            let otherTeam = try await teamA.transferSub(sub: Self.ada, target: "TEAMCCCC01", bearer: token)
            #expect(try otherTeam.jsonObject()["transfer_sub"]?.string != transferSub)
        }
    }

    @Test func peersMistakesGetApplesErrors() async throws {
        try await withSimulator { harness in
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: Self.app)
            let teamA = TeamClient(harness)
            let token = try await teamA.accessToken()
            func expectRefused(_ response: HTTPClientResponse, _ code: String, _ comment: Comment) {
                #expect(response.status == 400, comment)
                #expect(response.errorCode == code, comment)
                #expect(response.header("Cache-Control") == "no-store")
            }
            // One peer sends its own team ID as the target.
            expectRefused(try await teamA.transferSub(sub: Self.ada, target: harness.simulator.teamID, bearer: token), "invalid_request", "own team as target")
            // Another forgets the Bearer header: a 400 like every Apple error, not a 401.
            expectRefused(try await teamA.migrate([("sub", Self.ada), ("target", Self.teamB)], bearer: nil), "invalid_request", "no Bearer")
            expectRefused(try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: "a0.0.abcd.made-up"), "invalid_request", "unknown token")
            expectRefused(try await teamA.migrate([("sub", Self.ada)], bearer: token), "invalid_request", "no target")
            expectRefused(try await teamA.migrate([("sub", Self.ada), ("target", "team b")], bearer: token), "invalid_request", "not a team ID")
            expectRefused(try await teamA.migrate([("target", Self.teamB)], bearer: token), "invalid_request", "neither sub nor transfer_sub")
            expectRefused(try await teamA.transferSub(sub: Self.bob, target: Self.teamB, bearer: token), "invalid_request", "unknown sub")
            // A token for another client of the team does not serve this one.
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: "com.example.other")
            let otherToken = try #require(try await teamA.teamToken("com.example.other").jsonObject()["access_token"]?.string)
            expectRefused(try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: otherToken), "invalid_request", "token of another client")
            // The client secret is checked as on /auth/token.
            let wrongKey = ClientSecretMinter(teamID: harness.simulator.teamID, keyID: harness.simulator.keyID, key: try P256PrivateKey.generate())
            let badSecret = try await harness.client.send(
                HTTPClientRequest(
                    method: "POST", url: harness.baseURL + "/auth/usermigrationinfo",
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Bearer \(token)")],
                    body: FormURLEncoding.encode([
                        ("sub", Self.ada), ("target", Self.teamB), ("client_id", Self.app),
                        ("client_secret", try wrongKey.mint(for: Self.app, now: harness.clock.now)),
                    ])),
                idempotent: false)
            expectRefused(badSecret, "invalid_client", "wrong key")
            let json = try await harness.post("/auth/usermigrationinfo", contentType: "application/json", body: #"{"sub":"x"}"#)
            expectRefused(json, "invalid_request", "JSON body")
        }
    }

    @Test func aUserWhoRevokedBeforeTheMoveCannotBeMigrated() async throws {
        try await withSimulator { harness in
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: Self.app)
            harness.simulator.recordAuthorization(sub: Self.bob, clientID: Self.app)
            let teamA = TeamClient(harness)
            let tokenA = try await teamA.accessToken()
            let bobTransferSub = try #require(try await teamA.transferSub(sub: Self.bob, target: Self.teamB, bearer: tokenA).jsonObject()["transfer_sub"]?.string)
            harness.simulator.revokeConsent(sub: Self.bob, clientID: Self.app)
            let sender = try await teamA.transferSub(sub: Self.bob, target: Self.teamB, bearer: tokenA)
            #expect(sender.status == 400)
            #expect(sender.errorCode == "invalid_request")

            let moved = try harness.simulator.transfer(clientID: Self.app, toTeam: Self.teamB)
            #expect(moved.users == 1, "only Ada still had the app")
            let teamB = try TeamClient(harness, team: moved.toTeam)
            let recipient = try await teamB.exchange(bobTransferSub, bearer: try await teamB.accessToken())
            #expect(recipient.status == 400)
            #expect(recipient.errorCode == "invalid_request")
        }
    }

    @Test func theRecipientExchangesTransferSubsForItsOwnSubsAfterTheTransfer() async throws {
        try await withSimulator { harness in
            let adaRelay = "ada.a@privaterelay.appleid.com"
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: Self.app, email: adaRelay)
            harness.simulator.recordAuthorization(sub: Self.bob, clientID: Self.app, email: "bob@example.com")
            let teamA = TeamClient(harness)
            let tokenA = try await teamA.accessToken()
            var transferSubs: [String: String] = [:]
            for sub in [Self.ada, Self.bob] {
                transferSubs[sub] = try #require(try await teamA.transferSub(sub: sub, target: Self.teamB, bearer: tokenA).jsonObject()["transfer_sub"]?.string)
            }

            // Team B knows its credentials before the move, but the app is not its yet.
            let made = try await harness.postJSON("/sim/teams", [("team_id", .string(Self.teamB))])
            #expect(made.status == 200, "\(made.text)")
            let team = try made.jsonObject()
            #expect(team["team_id"]?.string == Self.teamB)
            let keyID = try #require(team["key_id"]?.string)
            #expect(keyID.count == 10 && keyID != harness.simulator.keyID)
            let teamB = try TeamClient(harness, team: try harness.simulator.team(Self.teamB))
            #expect(try harness.simulator.team(Self.teamB).keyID == keyID, "asking again finds the same team")
            let early = try await teamB.teamToken()
            #expect(early.status == 400)
            #expect(early.errorCode == "invalid_client")

            let response = try await harness.postJSON("/sim/transfer", [("client_id", .string(Self.app)), ("to_team", .string(Self.teamB))])
            #expect(response.status == 200, "\(response.text)")
            let transfer = try response.jsonObject()
            #expect(transfer["from_team"]?.string == harness.simulator.teamID)
            #expect(transfer["to_team"]?.object?["key_id"]?.string == keyID)
            #expect(transfer["users"]?.integer == 2)
            #expect(transfer["window_ends_at"]?.integer == harness.clock.now + 60 * 86_400)
            let again = try await harness.postJSON("/sim/transfer", [("client_id", .string(Self.app)), ("to_team", .string(Self.teamB))])
            #expect(again.status == 400, "the app already belongs to team B")

            let tokenB = try await teamB.accessToken()
            let ada = try await teamB.exchange(try #require(transferSubs[Self.ada]), bearer: tokenB)
            #expect(ada.status == 200, "\(ada.text)")
            let adaBody = try ada.jsonObject()
            let adaInB = try #require(harness.simulator.subject(of: Self.ada, inTeam: Self.teamB))
            #expect(adaInB != Self.ada)
            #expect(adaBody["sub"]?.string == adaInB)
            let newRelay = try #require(adaBody["email"]?.string)
            #expect(newRelay.hasSuffix("@private.icloud.com") && newRelay != adaRelay, "Hide My Email gives team B its own (new) address")
            #expect(adaBody["is_private_email"] == .bool(true), "a real boolean here")
            let bob = try await teamB.exchange(try #require(transferSubs[Self.bob]), bearer: tokenB)
            #expect(try bob.jsonObject().keys == ["sub"], "email only for relay users")

            // The old team keeps its team token and the sender's side for the window, but can
            // neither exchange (the transfer_sub is B's) nor sign people in any more.
            #expect(try await teamA.teamToken().status == 200)
            let stolen = try await teamA.exchange(try #require(transferSubs[Self.ada]), bearer: tokenA)
            #expect(stolen.errorCode == "invalid_request")
            #expect(try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: tokenA).status == 200)
            let (code, _) = try await harness.nativeCode(sub: Self.ada)
            #expect(try await harness.exchange(code: code).errorCode == "invalid_client", "A's secret no longer serves the app")
            // Team B's token does not serve team A's calls, nor B an unknown transfer_sub.
            #expect(try await teamB.exchange("123456.00000000000000000000000000000000.0000", bearer: tokenB).errorCode == "invalid_request")
            #expect(try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: tokenB).errorCode == "invalid_request")
        }
    }

    @Test func tokensCarryTransferSubForSixtyDaysThenTheEndpointIsInactive() async throws {
        try await withSimulator { harness in
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: Self.app)
            let (code, _) = try await harness.nativeCode(sub: Self.ada)
            let refreshToken = try #require(try await harness.exchange(code: code).jsonObject()["refresh_token"]?.string)
            let teamA = TeamClient(harness)
            let tokenA = try await teamA.accessToken()
            let transferSub = try #require(try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: tokenA).jsonObject()["transfer_sub"]?.string)
            #expect(try Self.claims(harness.simulator.issueCode(sub: Self.ada, clientID: Self.app).identityToken)["transfer_sub"] == nil)

            let moved = try harness.simulator.transfer(clientID: Self.app, toTeam: Self.teamB)
            let adaInB = try #require(harness.simulator.subject(of: Self.ada, inTeam: Self.teamB))
            // A phone signing in names the person however it likes; the token is team B's.
            for named in [Self.ada, adaInB] {
                let issued = try harness.simulator.issueCode(sub: named, clientID: Self.app)
                let claims = try Self.claims(issued.identityToken)
                #expect(claims["sub"]?.string == adaInB)
                #expect(claims["transfer_sub"]?.string == transferSub)
                #expect(issued.sub == adaInB && issued.transferSub == transferSub)
            }
            // Tokens issued to team A stopped working with the move.
            #expect(try await harness.refresh(refreshToken).errorCode == "invalid_client")
            let teamB = try TeamClient(harness, team: moved.toTeam)
            let refreshedByB = try await harness.postForm("/auth/token", [
                ("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", Self.app), ("client_secret", try teamB.secret()),
            ])
            #expect(refreshedByB.errorCode == "invalid_grant")
            let codeB = try harness.simulator.issueCode(sub: Self.ada, clientID: Self.app).code
            let exchanged = try await harness.postForm("/auth/token", [
                ("grant_type", "authorization_code"), ("code", codeB), ("client_id", Self.app), ("client_secret", try teamB.secret()),
            ])
            #expect(exchanged.status == 200, "\(exchanged.text)")
            let idToken = try #require(try exchanged.jsonObject()["id_token"]?.string)
            #expect(try Self.claims(idToken)["transfer_sub"]?.string == transferSub)

            let tokenB = try await teamB.accessToken()
            let moment = try await harness.postJSON("/sim/clock", [("advance_seconds", .integer(60 * 86_400 - 1))])
            #expect(try moment.jsonObject()["now"]?.integer == harness.simulator.now)
            #expect(try Self.claims(harness.simulator.issueCode(sub: Self.ada, clientID: Self.app).identityToken)["transfer_sub"] != nil)
            harness.simulator.advanceClock(seconds: 1)

            let after = try Self.claims(harness.simulator.issueCode(sub: Self.ada, clientID: Self.app).identityToken)
            #expect(after["sub"]?.string == adaInB)
            #expect(after["transfer_sub"] == nil, "the window is over")
            #expect(after["iat"]?.integer == harness.clock.now + 60 * 86_400, "tokens follow the simulator's clock")
            let tokenB2 = try await teamB.accessToken()
            let late = try await teamB.exchange(transferSub, bearer: tokenB2)
            #expect(late.status == 400)
            #expect(late.errorCode == "invalid_request")
            #expect(try await teamB.exchange(transferSub, bearer: tokenB).errorCode == "invalid_request", "the old team token expired")
            #expect(try await teamA.teamToken().errorCode == "invalid_client", "team A no longer has the app")
            #expect(try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: tokenA).errorCode == "invalid_request")
        }
    }

    @Test func aFaultCanHitTheMigrationEndpointPartWay() async throws {
        try await withSimulator { harness in
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: Self.app)
            let teamA = TeamClient(harness)
            let token = try await teamA.accessToken()
            let added = try await harness.postJSON("/sim/faults", [
                ("endpoint", .string("usermigrationinfo")), ("status", .integer(429)), ("count", .integer(2)), ("after", .integer(1)),
            ])
            #expect(added.status == 200, "\(added.text)")
            var statuses: [Int] = []
            for _ in 0..<4 { statuses.append(try await teamA.transferSub(sub: Self.ada, target: Self.teamB, bearer: token).status) }
            #expect(statuses == [200, 429, 429, 200])
            #expect(harness.simulator.calls.filter { $0.endpoint == "usermigrationinfo" }.count == 4)
        }
    }

    @Test func teamsTransfersAndTheClockSurviveARestart() async throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let clock = HeldClock(simulatorStart)
        var team: SimulatorTeam?
        var adaInB = ""
        try await withSimulator(stateDirectory: directory, clock: clock) { harness in
            harness.simulator.recordAuthorization(sub: Self.ada, clientID: Self.app)
            team = try harness.simulator.transfer(clientID: Self.app, toTeam: Self.teamB).toTeam
            adaInB = try #require(harness.simulator.subject(of: Self.ada, inTeam: Self.teamB))
            harness.simulator.advanceClock(seconds: 86_400)
        }
        let saved = try #require(team)
        #expect(access("\(directory)/AuthKey_\(saved.keyID).p8", R_OK) == 0, "team B's key is saved like the first team's")
        try await withSimulator(stateDirectory: directory, clock: clock) { harness in
            #expect(harness.simulator.now == clock.now + 86_400)
            let reloaded = try harness.simulator.team(Self.teamB)
            #expect(reloaded.keyID == saved.keyID && reloaded.developerKeyPEM == saved.developerKeyPEM)
            let issued = try harness.simulator.issueCode(sub: Self.ada, clientID: Self.app)
            #expect(issued.sub == adaInB)
            #expect(issued.transferSub != nil)
            let teamB = try TeamClient(harness, team: reloaded)
            #expect(try await teamB.teamToken().status == 200)
        }
    }
}
