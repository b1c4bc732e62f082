import Testing
@testable import HTTPServer

/// Who counts as one client for the connection cap and the rate limits (docs/reference/http-api.md: per host, not
/// per address).
@Suite struct ClientKeyTests {
    @Test func anIPv6ClientIsItsSlash64() {
        let key = ClientKey(address: "2001:db8:1:2::1")
        #expect(key.bytes == [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2])
        #expect(ClientKey(address: "2001:db8:1:2:ffff:ffff:ffff:ffff") == key)
        #expect(ClientKey(address: "[2001:db8:1:2:abcd::9]") == key)
        #expect(ClientKey(address: "2001:db8:1:3::1") != key)
    }

    @Test func anIPv4ClientIsItsAddressHoweverItIsWritten() {
        let key = ClientKey(address: "192.0.2.7")
        #expect(key.bytes == [192, 0, 2, 7])
        #expect(ClientKey(address: "::ffff:192.0.2.7") == key)
        #expect(ClientKey(address: "[::ffff:c000:207]") == key)
        #expect(ClientKey(address: "192.0.2.8") != key)
    }

    @Test func textThatIsNoAddressIsStillSomeone() {
        #expect(ClientKey(address: "unknown").bytes == Array("unknown".utf8))
        #expect(ClientKey(address: "unknown") != ClientKey(address: "192.0.2.7"))
    }
}
