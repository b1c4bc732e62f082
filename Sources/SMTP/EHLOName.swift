import Glibc

/// The name the client gives in `EHLO` (RFC 5321 §4.1.4): its fully qualified domain name, or
/// when it has none, the address of its end of the connection as a literal. Some servers
/// refuse a bare single-label name.
enum EHLOName {
    static func `default`(localAddress: sockaddr_storage) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count - 1) == 0 {
            let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if isDomain(name), name.contains(".") { return name }
        }
        return addressLiteral(localAddress) ?? "[127.0.0.1]"
    }

    /// A name given in the configuration: a domain or an address literal, nothing that could
    /// end the command line.
    static func isValid(_ name: String) -> Bool {
        if name.hasPrefix("["), name.hasSuffix("]"), name.count > 2 {
            return name.dropFirst().dropLast().utf8.allSatisfy { byte in
                isDomainByte(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
            }
        }
        return isDomain(name)
    }

    private static func isDomain(_ name: String) -> Bool {
        let labels = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return !name.isEmpty && name.utf8.count <= 253
            && labels.allSatisfy { !$0.isEmpty && $0.count <= 63 && $0.allSatisfy(isDomainByte) }
    }

    private static func isDomainByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// `[192.0.2.1]` or `[IPv6:2001:db8::1]` (RFC 5321 §4.1.3).
    private static func addressLiteral(_ storage: sockaddr_storage) -> String? {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = Int32(storage.ss_family)
        let written: UnsafePointer<CChar>? = withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                }
            }
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                }
            }
            return nil
        }
        guard written != nil else { return nil }
        let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[IPv6:\(address)]" : "[\(address)]"
    }
}
