import Logging
import OpenSSLCrypto
import Synchronization

/// What every endpoint of the simulator shares: the simulated teams, the clock, the state, and
/// the test controls.
final class SimulatorContext: Sendable {
    /// The configured team: it owns every app until one is moved (`POST /sim/transfer`).
    let primaryTeam: SimulatorTeam
    let clock: @Sendable () -> Int64
    let makeSigningKey: @Sendable () throws -> RSAPrivateKey
    let store: SimulatorStore
    let identityTokens = IdentityTokenMinter()
    let faults = FaultInjector()
    let calls = CallLog()
    /// What the SMTP listener accepted.
    let mailbox: Mailbox
    let logger: Logger
    /// Seconds `POST /sim/clock` added to `clock`; kept in the state too, so a restart with a
    /// state directory keeps the simulated time.
    private let clockOffset: Atomic<Int64>

    init(
        primaryTeam: SimulatorTeam, clock: @escaping @Sendable () -> Int64, makeSigningKey: @escaping @Sendable () throws -> RSAPrivateKey,
        store: SimulatorStore, mailbox: Mailbox, logger: Logger
    ) {
        self.mailbox = mailbox
        self.primaryTeam = primaryTeam
        self.clock = clock
        self.makeSigningKey = makeSigningKey
        self.store = store
        self.logger = logger
        clockOffset = Atomic(store.read { $0.clockOffset })
    }

    var teamID: String { primaryTeam.teamID }

    var now: Int64 { clock() + clockOffset.load(ordering: .relaxed) }

    /// Moves the simulated clock by `seconds` (either way); returns the new time.
    func advanceClock(by seconds: Int64) -> Int64 {
        // Under the state's lock, so concurrent moves are saved in the order they happened.
        let offset = store.change { state in
            state.clockOffset = clockOffset.wrappingAdd(seconds, ordering: .relaxed).newValue
            return state.clockOffset
        }
        return clock() + offset
    }
}
