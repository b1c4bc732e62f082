/// Private Email Relay and the mailbox: the operations behind `/sim/relay/...`, `/sim/mailbox`
/// and the SMTP listener.
extension SimulatorContext {
    /// Registers sending domains for `teamID` (a team the simulator knows); returns all of the
    /// team's domains, sorted. Nothing changes when any of them is not a domain name.
    func registerRelayDomains(_ domains: [String], teamID: String) throws(ControlFailure) -> [String] {
        guard team(id: teamID) != nil else {
            throw ControlFailure("team_id \(teamID) is not a team of the simulator (make it with POST /sim/teams).")
        }
        guard !domains.isEmpty else { throw ControlFailure("domains must name at least one domain.") }
        var normalized: [String] = []
        for domain in domains {
            guard let name = RelayDomainName.normalize(domain) else {
                throw ControlFailure("\(domain.debugDescription) is not a domain name (letters, digits and hyphens, labels joined by dots).")
            }
            normalized.append(name)
        }
        return store.change { state in
            state.relayDomains[teamID, default: []].formUnion(normalized)
            return state.relayDomains[teamID, default: []].sorted()
        }
    }

    /// Every team's registered domains, by team ID.
    var relayDomains: [String: [String]] {
        store.read { $0.relayDomains.mapValues { $0.sorted() } }
    }

    /// The person turns forwarding to their inbox off or on for one app, in Settings.
    func setEmailForwarding(sub: String, clientID: String, enabled: Bool) throws(ControlFailure) -> Grant {
        let grant = store.change { state -> Grant? in
            guard state.setEmailForwarding(sub: sub, clientID: clientID, enabled: enabled) else { return nil }
            return state.grants[Grant.key(sub: sub, clientID: clientID)]
        }
        guard let grant else { throw ControlFailure("\(sub) has not authorized \(clientID).") }
        return grant
    }

    /// `email-disabled` and `email-enabled` tell the app the person changed forwarding: the
    /// relay follows the same change, for the notification's app.
    func recordForwardingChange(_ event: NotificationEvent) {
        let enabled: Bool
        switch event.type {
        case "email-disabled": enabled = false
        case "email-enabled": enabled = true
        default: return
        }
        store.change { state in
            guard let clientID = event.clientID ?? state.firstClient(of: event.sub) else { return }
            _ = state.setEmailForwarding(sub: event.sub, clientID: clientID, enabled: enabled)
        }
    }

    /// What the relay does with mail from `sender` to `recipient`.
    func route(recipient: String, sender: String) -> RelayRoute {
        store.read { $0.route(recipient: recipient, sender: sender) }
    }
}
