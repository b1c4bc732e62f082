
/// `rate_limit` (docs/reference/configuration.md): a bucket of `requests` that refills evenly over `perSeconds`, so
/// `600/m` allows a burst of 600 and then 10 a second.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public struct Failure: Error {}

    public let requests: Int
    public let perSeconds: Int

    public init(requests: Int, perSeconds: Int) {
        self.requests = requests
        self.perSeconds = perSeconds
    }

    /// `N/s`, `N/m` or `N/h` with N in 1...1,000,000; `0` is nil (off).
    public static func parse(_ text: String) throws(Failure) -> RateLimit? {
        if text == "0" { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].allSatisfy(\.isASCII), let requests = Int(parts[0]), (1...1_000_000).contains(requests)
        else { throw Failure() }
        let seconds: Int
        switch parts[1] {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3_600
        default: throw Failure()
        }
        return RateLimit(requests: requests, perSeconds: seconds)
    }

    public var description: String {
        switch perSeconds {
        case 1: "\(requests)/s"
        case 60: "\(requests)/m"
        default: "\(requests)/h"
        }
    }
}
