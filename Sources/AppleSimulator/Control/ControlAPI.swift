import HTTPServer
import JSON

/// The simulator's own routes under `/sim/` (docs/reference/http-api.md): what tests and developers use to act
/// as a phone, as the person in Settings, as Apple's notification sender, and as a failing
/// network. JSON in, JSON out; a request it cannot act on is 400 `invalid_request`; one from
/// another site is 403 `forbidden`, and a POST that is not JSON 415 (`ControlRequestGuard`).
struct ControlAPI: Sendable {
    let context: SimulatorContext
    let notifications: NotificationSender
    let requestGuard: ControlRequestGuard

    func register(into router: inout Router) {
        // Every route under /sim/ passes the guard first: no foreign Origin, JSON bodies only.
        let requestGuard = self.requestGuard
        func add(_ method: HTTPMethod, _ path: String, _ handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) {
            router.add(method, path) { request in
                if let refusal = requestGuard.refusal(request) { return refusal }
                return await handler(request)
            }
        }
        add(.post, "/sim/codes") { request in await self.run(request, self.codes) }
        add(.post, "/sim/notify") { request in await self.run(request, self.notify) }
        add(.post, "/sim/revoke-consent") { request in await self.run(request, self.revokeConsent) }
        add(.post, "/sim/delete-account") { request in await self.run(request, self.deleteAccount) }
        add(.post, "/sim/rotate-keys") { _ in self.rotateKeys() }
        add(.post, "/sim/teams") { request in await self.run(request, self.makeTeam) }
        add(.post, "/sim/transfer") { request in await self.run(request, self.transfer) }
        add(.post, "/sim/clock") { request in await self.run(request, self.advanceClock) }
        add(.get, "/sim/clock") { _ in ControlResponse.object([("now", .integer(self.context.now))]) }
        add(.post, "/sim/faults") { request in await self.run(request, self.addFault) }
        add(.get, "/sim/faults") { _ in
            ControlResponse.object([("faults", .array(self.context.faults.pending.map(\.json)))])
        }
        add(.delete, "/sim/faults") { _ in
            self.context.faults.clear()
            return ControlResponse.object([("faults", .array([]))])
        }
        add(.get, "/sim/log") { _ in
            ControlResponse.object([("calls", .array(self.context.calls.all.map(\.json)))])
        }
        add(.delete, "/sim/log") { _ in
            self.context.calls.clear()
            return ControlResponse.object([("calls", .array([]))])
        }
        add(.post, "/sim/relay/domains") { request in await self.run(request, self.registerRelayDomains) }
        add(.get, "/sim/relay/domains") { _ in self.listRelayDomains() }
        add(.post, "/sim/relay/forwarding") { request in await self.run(request, self.setEmailForwarding) }
        add(.get, "/sim/mailbox") { request in self.listMailbox(request) }
        add(.delete, "/sim/mailbox") { _ in
            self.context.mailbox.clear()
            return ControlResponse.object([("messages", .array([]))])
        }
    }

    private func run(_ request: HTTPRequest, _ body: (JSONObject) async throws(ControlFailure) -> HTTPResponse) async -> HTTPResponse {
        let object: JSONObject
        if request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            object = JSONObject()
        } else {
            guard let parsed = try? JSONParser.parse(request.body).object else {
                return ControlFailure("The body must be a JSON object.").response
            }
            object = parsed
        }
        do {
            return try await body(object)
        } catch {
            return error.response
        }
    }

    private static func required(_ object: JSONObject, _ key: String) throws(ControlFailure) -> String {
        guard let value = object.text(key), !value.isEmpty else { throw ControlFailure("\(key) is required (a non-empty string).") }
        return value
    }

    private static func optional(_ object: JSONObject, _ key: String) throws(ControlFailure) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.string else { throw ControlFailure("\(key) must be a string.") }
        return text
    }

    private static func optionalFlag(_ object: JSONObject, _ key: String) throws(ControlFailure) -> Bool? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let flag = object.flag(key) else { throw ControlFailure("\(key) must be true or false.") }
        return flag
    }

    private func codes(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        let sub = try Self.required(object, "sub")
        let clientID = try Self.required(object, "client_id")
        let redirectURI = try Self.optional(object, "redirect_uri")
        if let redirectURI, !AuthorizeRequest.isAcceptableRedirect(redirectURI) {
            throw ControlFailure("redirect_uri must be https, or http to loopback, without a fragment.")
        }
        do {
            let issued = try context.issueNativeCode(
                sub: sub, clientID: clientID, nonce: try Self.optional(object, "nonce"), email: try Self.optional(object, "email"),
                isPrivateEmail: try Self.optionalFlag(object, "is_private_email"), redirectURI: redirectURI)
            return ControlResponse.object([("code", .string(issued.code)), ("id_token", .string(issued.identityToken))])
        } catch let failure as ControlFailure {
            throw failure
        } catch {
            return ControlResponse.error("Signing failed: \(error)", code: "server_error", status: 500)
        }
    }

    private func notify(_ object: JSONObject) async throws(ControlFailure) -> HTTPResponse {
        let url = try Self.required(object, "url")
        let type = try Self.required(object, "type")
        let sub = try Self.required(object, "sub")
        var form = NotificationEvent.EventsForm.string
        if let name = try Self.optional(object, "events_as") {
            guard let parsed = NotificationEvent.EventsForm(rawValue: name) else {
                throw ControlFailure("events_as must be \"string\", \"object\" or \"array\".")
            }
            form = parsed
        }
        let event = NotificationEvent(
            type: type, sub: sub, email: try Self.optional(object, "email"),
            isPrivateEmail: try Self.optionalFlag(object, "is_private_email"), eventsForm: form,
            clientID: try Self.optional(object, "client_id"))
        do {
            let delivery = try await notifications.send(event, to: url)
            return ControlResponse.object([("status", .integer(Int64(delivery.status))), ("jti", .string(delivery.jti))])
        } catch let failure as NotificationSender.Failure {
            return ControlResponse.object(
                [
                    ("error", .string("delivery_failed")), ("error_description", .string(failure.description)),
                    ("jti", .optional(failure.jti)),
                ], status: 502)
        } catch {
            return ControlResponse.error("Signing failed: \(error)", code: "server_error", status: 500)
        }
    }

    private func revokeConsent(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        let revoked = context.revokeConsent(sub: try Self.required(object, "sub"), clientID: try Self.required(object, "client_id"))
        return ControlResponse.object([("revoked_tokens", .integer(Int64(revoked)))])
    }

    private func deleteAccount(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        let existed = context.deleteAccount(sub: try Self.required(object, "sub"))
        return ControlResponse.object([("deleted", .bool(existed))])
    }

    private func rotateKeys() -> HTTPResponse {
        do {
            let kids = try context.rotateKeys()
            return ControlResponse.object([("keys", .array(kids.map { .string($0) })), ("current", .string(kids[kids.count - 1]))])
        } catch {
            return ControlResponse.error("Key generation failed: \(error)", code: "server_error", status: 500)
        }
    }

    /// A team, made with a key of its own when new: what a test configures its server with.
    private func makeTeam(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        ControlResponse.json(try context.makeTeam(try Self.required(object, "team_id")).json)
    }

    /// Moves an app to another team (APPLE.md §8); answers with the receiving team's
    /// credentials and the transfer's window.
    private func transfer(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        let moved = try context.transfer(clientID: try Self.required(object, "client_id"), toTeam: try Self.required(object, "to_team"))
        return ControlResponse.object([
            ("client_id", .string(moved.clientID)), ("from_team", .string(moved.fromTeamID)), ("to_team", moved.toTeam.json),
            ("users", .integer(Int64(moved.users))), ("transferred_at", .integer(moved.transferredAt)),
            ("window_ends_at", .integer(moved.windowEndsAt)),
        ])
    }

    /// Ten years either way is more than any test of a 60-day window needs, and keeps every
    /// time the simulator mints far from overflow.
    static let maximumClockStep: Int64 = 10 * 366 * 86_400

    private func advanceClock(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        guard let seconds = object["advance_seconds"]?.integer, abs(seconds) <= Self.maximumClockStep else {
            throw ControlFailure("advance_seconds must be an integer of at most ten years either way.")
        }
        return ControlResponse.object([("now", .integer(context.advanceClock(by: seconds)))])
    }

    /// `{"team_id"?, "domains": [...]}` (or `"domain"`): the team registers sending domains
    /// for Private Email Relay; the configured team when `team_id` is absent.
    private func registerRelayDomains(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        let teamID = try Self.optional(object, "team_id") ?? context.teamID
        var domains: [String] = []
        if let single = try Self.optional(object, "domain") { domains.append(single) }
        if let value = object["domains"], !value.isNull {
            guard let list = value.array, list.allSatisfy({ $0.string != nil }) else { throw ControlFailure("domains must be an array of strings.") }
            domains += list.compactMap(\.string)
        }
        let registered = try context.registerRelayDomains(domains, teamID: teamID)
        return ControlResponse.object([("team_id", .string(teamID)), ("domains", .array(registered.map { .string($0) }))])
    }

    private func listRelayDomains() -> HTTPResponse {
        let teams = context.relayDomains.sorted { $0.key < $1.key }.map { team, domains in
            JSONValue.object(JSONObject([("team_id", .string(team)), ("domains", .array(domains.map { .string($0) }))]))
        }
        return ControlResponse.object([("teams", .array(teams))])
    }

    /// `{"sub", "client_id", "enabled"}`: the person turns forwarding to their inbox off or on
    /// for one app, without a notification (`/sim/notify` with `email-disabled` or
    /// `email-enabled` does the same and tells the app).
    private func setEmailForwarding(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        let sub = try Self.required(object, "sub")
        let clientID = try Self.required(object, "client_id")
        guard let enabled = try Self.optionalFlag(object, "enabled") else { throw ControlFailure("enabled is required (true or false).") }
        let grant = try context.setEmailForwarding(sub: sub, clientID: clientID, enabled: enabled)
        return ControlResponse.object([
            ("sub", .string(grant.sub)), ("client_id", .string(grant.clientID)), ("email", .optional(grant.email)),
            ("is_private_email", .bool(grant.isPrivateEmail)), ("email_forwarding", .bool(grant.emailForwarding)),
        ])
    }

    /// `?to=address` keeps the messages that reached or were sent to it.
    private func listMailbox(_ request: HTTPRequest) -> HTTPResponse {
        guard let query = try? FormFields(parsing: request.query ?? "") else {
            return ControlFailure("The query string is malformed.").response
        }
        let messages = context.mailbox.messages(to: query.nonEmpty("to"))
        return ControlResponse.object([("messages", .array(messages.map(\.json)))])
    }

    private func addFault(_ object: JSONObject) throws(ControlFailure) -> HTTPResponse {
        let fault = try SimulatorFault.parse(object).get()
        context.faults.add(fault)
        return ControlResponse.object([("faults", .array(context.faults.pending.map(\.json)))])
    }
}
