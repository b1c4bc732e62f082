/// The open connections, in all and per client, held against `HTTPLimits.maxConnections` and
/// `HTTPLimits.maxConnectionsPerClient`. A connection counted as no client (nil: a peer exempt
/// from the per-client cap) counts only in the total.
struct OpenConnections {
    private(set) var total = 0
    private var byClient: [ClientKey: Int] = [:]

    /// Counts a new connection, or refuses it (false, nothing counted) when it would pass a cap.
    mutating func admit(_ client: ClientKey?, limits: HTTPLimits) -> Bool {
        guard total < limits.maxConnections else { return false }
        if let client {
            let open = byClient[client, default: 0]
            guard open < limits.maxConnectionsPerClient else { return false }
            byClient[client] = open + 1
        }
        total += 1
        return true
    }

    /// Uncounts a connection admitted as `client`.
    mutating func end(_ client: ClientKey?) {
        total -= 1
        if let client, let open = byClient[client] {
            byClient[client] = open > 1 ? open - 1 : nil
        }
    }

    func count(of client: ClientKey) -> Int { byClient[client, default: 0] }
}
