import Testing
@testable import HTTPServer

/// The connection caps as a pure count (issue 19: one host with a /64 held all 10,000
/// connections, the per-address cap counting each IPv6 address apart).
@Suite struct OpenConnectionsTests {
    private let limits: HTTPLimits = {
        var limits = HTTPLimits()
        limits.maxConnections = 10
        limits.maxConnectionsPerClient = 3
        return limits
    }()

    /// Admits a connection from each peer in turn (nil: exempt from the per-client cap).
    private func admit(_ peers: [String?], to open: inout OpenConnections) -> [Bool] {
        peers.map { peer in open.admit(peer.map { ClientKey(address: $0) }, limits: limits) }
    }

    @Test func addressesOfOneIPv6Slash64CountAgainstOneCap() {
        var open = OpenConnections()
        let oneHost = ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2:abcd::9"]
        #expect(admit(oneHost, to: &open) == [true, true, true, false])
        // The next /64 is another host.
        #expect(admit(["2001:db8:1:3::1"], to: &open) == [true])
        // One of the first host's goes: it may open one more, and only one.
        open.end(ClientKey(address: "2001:db8:1:2::2"))
        #expect(admit(["2001:db8:1:2:abcd::9", "2001:db8:1:2::7"], to: &open) == [true, false])
        #expect(open.count(of: ClientKey(address: "2001:db8:1:2::")) == 3)
        #expect(open.total == 4)
    }

    @Test func ipv4ClientsAreCountedPerAddressAndMappedAddressesAsTheirIPv4() {
        var open = OpenConnections()
        #expect(admit(["192.0.2.7", "192.0.2.7", "192.0.2.7", "::ffff:192.0.2.7", "192.0.2.8"], to: &open)
            == [true, true, true, false, true])
        #expect(open.total == 4)
    }

    @Test func anExemptPeerCountsOnlyInTheTotal() {
        var open = OpenConnections()
        #expect(admit([nil, nil, nil, nil, nil], to: &open) == [true, true, true, true, true])
        #expect(admit(["2001:db8:1:2::1", "2001:db8:1:2::1", "2001:db8:1:2::1"], to: &open) == [true, true, true])
        // An exempt connection ending leaves the client's count alone.
        open.end(nil)
        #expect(admit(["2001:db8:1:2::1"], to: &open) == [false])
        #expect(open.total == 7)
    }

    @Test func maxConnectionsCapsEveryoneTogether() {
        var open = OpenConnections()
        #expect(admit((0..<10).map { "192.0.2.\($0)" }, to: &open) == Array(repeating: true, count: 10))
        #expect(admit(["192.0.2.99", nil], to: &open) == [false, false])
        open.end(ClientKey(address: "192.0.2.3"))
        #expect(admit([nil], to: &open) == [true])
        #expect(open.total == 10)
    }
}
