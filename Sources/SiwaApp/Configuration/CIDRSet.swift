/// The networks of `trusted_proxies`: IPv4 and IPv6 CIDRs, asked whether a peer address is one of them.
public struct CIDRSet: Equatable, Sendable, CustomStringConvertible {
    /// One network: the address with its host bits cleared, and the prefix length.
    struct Network: Equatable, Sendable {
        let address: IPAddressLiteral
        let prefixLength: Int

        func contains(_ candidate: IPAddressLiteral) -> Bool {
            guard candidate.bytes.count == address.bytes.count else { return false }
            return CIDRSet.masked(candidate.bytes, prefixLength: prefixLength) == address.bytes
        }
    }

    /// A CIDR that could not be read; `text` is what was given.
    public struct InvalidCIDR: Error, Equatable, Sendable {
        public let text: String
    }

    let networks: [Network]

    /// The empty set: no address is trusted.
    public init() {
        networks = []
    }

    /// Reads `10.0.0.0/8`, `fd00::/8`, or a bare address (a /32 or /128). Host bits after the
    /// prefix are ignored, as `10.1.2.3/8` means the same network as `10.0.0.0/8`.
    public init(cidrs: some Sequence<String>) throws(InvalidCIDR) {
        var networks: [Network] = []
        for text in cidrs {
            guard let network = Self.network(text) else { throw InvalidCIDR(text: text) }
            if !networks.contains(network) { networks.append(network) }
        }
        self.networks = networks
    }

    public var isEmpty: Bool { networks.isEmpty }

    /// Whether `address` (IPv4 or IPv6 text, optionally in brackets) is inside one of the networks.
    /// An IPv4-mapped IPv6 address also matches the IPv4 networks.
    public func contains(_ address: String) -> Bool {
        var text = Substring(address)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        guard let parsed = IPAddressLiteral(String(text)) else { return false }
        let unmapped = parsed.unmappedIPv4
        return networks.contains { $0.contains(parsed) || (unmapped.map($0.contains) ?? false) }
    }

    /// The networks in canonical form, e.g. `["10.0.0.0/8", "::1/128"]`.
    public var cidrs: [String] {
        networks.map { "\($0.address.text)/\($0.prefixLength)" }
    }

    public var description: String { cidrs.joined(separator: ", ") }

    private static func network(_ text: String) -> Network? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddressLiteral(String(parts[0])) else { return nil }
        let maximum = address.bytes.count * 8
        var prefixLength = maximum
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let length = Int(digits), length <= maximum
            else { return nil }
            prefixLength = length
        }
        let network = IPAddressLiteral(bytes: masked(address.bytes, prefixLength: prefixLength))
        return Network(address: network, prefixLength: prefixLength)
    }

    static func masked(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
        var result = bytes
        for index in result.indices {
            let bitsKept = min(max(prefixLength - index * 8, 0), 8)
            result[index] &= bitsKept == 0 ? 0 : ~UInt8(0) << (8 - bitsKept)
        }
        return result
    }
}
