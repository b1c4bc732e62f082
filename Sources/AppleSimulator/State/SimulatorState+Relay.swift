/// Private Email Relay as the simulator plays it (APPLE.md §10b): Apple forwards mail sent to a
/// relay address to the person's own inbox only when the sender's domain is registered by the
/// team that owns the app, and the person has not turned forwarding off for it.
extension SimulatorState {
    /// Where mail from `sender` (the `MAIL FROM` address, empty for a bounce) to `recipient` goes.
    func route(recipient: String, sender: String) -> RelayRoute {
        let address = recipient.lowercased()
        // The relay addresses the simulator issued: each person's own, and any a test handed out
        // through `/sim/codes` as private.
        let holders = grants.values.filter { $0.isPrivateEmail && $0.email?.lowercased() == address }
        guard let person = persons.values.first(where: { $0.relayEmail.lowercased() == address }) ?? holders.first.flatMap({ persons[$0.sub] })
        else {
            return Person.isRelayAddress(address) ? .refuse("5.1.1 <\(recipient)>: no such relay address") : .deliver(recipient)
        }
        let domain = Self.domain(of: sender)
        guard let domain, relayDomains[person.teamID]?.contains(domain) == true else {
            let named = domain.map { "the sender's domain \($0) is" } ?? "a sender without a domain is"
            return .refuse(
                "5.7.1 <\(recipient)>: \(named) not registered for Private Email Relay by team \(person.teamID) (POST /sim/relay/domains)")
        }
        let grantsOfAddress = grants.values.filter { $0.sub == person.sub && $0.isPrivateEmail && ($0.email?.lowercased() ?? address) == address }
        if let off = grantsOfAddress.filter({ !$0.emailForwarding }).map(\.clientID).sorted().first {
            return .refuse("5.7.1 <\(recipient)>: the person turned email forwarding off for \(off)")
        }
        guard let own = person.appleID else {
            return .refuse("5.1.1 <\(recipient)>: no inbox behind this relay address (the person was made up through /sim/codes)")
        }
        return .forward(own)
    }

    /// Lower-cased; nil for the null path or an address without one.
    static func domain(of address: String) -> String? {
        guard let at = address.lastIndex(of: "@") else { return nil }
        let domain = address[address.index(after: at)...].lowercased()
        return domain.isEmpty ? nil : domain
    }

    /// Sets a person's forwarding for a client; false when the person never authorized it.
    mutating func setEmailForwarding(sub: String, clientID: String, enabled: Bool) -> Bool {
        let key = Grant.key(sub: sub, clientID: clientID)
        guard grants[key] != nil else { return false }
        grants[key]?.emailForwarding = enabled
        return true
    }
}
