import JSON

/// A failure to inject on one of Apple's endpoints, for testing how a client copes with Apple
/// being slow, down or broken (`POST /sim/faults`).
public struct SimulatorFault: Sendable, Equatable {
    public enum Endpoint: String, Sendable, CaseIterable {
        case keys, token, revoke, authorize
        case userMigrationInfo = "usermigrationinfo"
    }

    public enum Body: String, Sendable {
        /// Bytes that are not JSON at all (an HTML error page from a proxy).
        case garbage
        /// The real answer cut short, as when a connection drops mid-body.
        case truncated
    }

    public var endpoint: Endpoint
    /// The status to answer with; nil keeps the real one (a delay alone, or a truncated body).
    public var status: Int?
    public var delayMilliseconds: Int
    /// How many calls in a row it applies to.
    public var count: Int
    /// How many calls to let through first, for a failure in the middle of a run (counted
    /// once the fault is first in its endpoint's queue).
    public var after: Int
    public var body: Body?
    /// The `error` code of the Apple-like error body; defaults by status.
    public var error: String?
    /// Holds each call (after its delay) until the test opens it; in process only.
    public var hold: SimulatorHold?

    public init(
        endpoint: Endpoint, status: Int? = nil, delayMilliseconds: Int = 0, count: Int = 1, after: Int = 0, body: Body? = nil,
        error: String? = nil, hold: SimulatorHold? = nil
    ) {
        self.endpoint = endpoint
        self.status = status
        self.delayMilliseconds = delayMilliseconds
        self.count = count
        self.after = after
        self.body = body
        self.error = error
        self.hold = hold
    }

    var json: JSONValue {
        .object(.compact([
            ("endpoint", .string(endpoint.rawValue)), ("status", status.map { .integer(Int64($0)) }),
            ("delay_ms", .integer(Int64(delayMilliseconds))), ("count", .integer(Int64(count))), ("after", .integer(Int64(after))),
            ("body", .optional(body?.rawValue)), ("error", .optional(error)),
        ]))
    }

    /// Reads a `/sim/faults` body; the reason when it is not acceptable.
    static func parse(_ object: JSONObject) -> Result<SimulatorFault, ControlFailure> {
        guard let name = object.text("endpoint"), let endpoint = Endpoint(rawValue: name) else {
            return .failure(ControlFailure("endpoint must be one of keys, token, revoke, authorize, usermigrationinfo."))
        }
        var fault = SimulatorFault(endpoint: endpoint)
        if let value = object["status"], !value.isNull {
            guard let status = value.integer, (100...599).contains(status) else {
                return .failure(ControlFailure("status must be an HTTP status code."))
            }
            fault.status = Int(status)
        }
        if let value = object["delay_ms"], !value.isNull {
            guard let delay = value.integer, (0...120_000).contains(delay) else {
                return .failure(ControlFailure("delay_ms must be 0 to 120000."))
            }
            fault.delayMilliseconds = Int(delay)
        }
        if let value = object["count"], !value.isNull {
            guard let count = value.integer, (1...1_000_000).contains(count) else {
                return .failure(ControlFailure("count must be a positive integer."))
            }
            fault.count = Int(count)
        }
        if let value = object["after"], !value.isNull {
            guard let after = value.integer, (0...1_000_000).contains(after) else {
                return .failure(ControlFailure("after must be 0 to 1000000."))
            }
            fault.after = Int(after)
        }
        if let value = object["body"], !value.isNull {
            guard let body = value.string.flatMap(Body.init(rawValue:)) else {
                return .failure(ControlFailure("body must be \"garbage\" or \"truncated\"."))
            }
            fault.body = body
        }
        fault.error = object.text("error")
        return .success(fault)
    }
}
