import JSON
import Logging
import Synchronization

/// The simulator's state behind one lock. Every change is written to the state file (when
/// there is a state directory) before the lock is released, so saves happen in the order the
/// changes did and a restart sees the last acknowledged change.
final class SimulatorStore: Sendable {
    static let fileName = "state.json"

    private let state: Mutex<SimulatorState>
    private let file: StateFile?
    private let developerKeyPEM: String
    private let logger: Logger

    init(state: SimulatorState, file: StateFile?, developerKeyPEM: String, logger: Logger) {
        self.state = Mutex(state)
        self.file = file
        self.developerKeyPEM = developerKeyPEM
        self.logger = logger
    }

    func read<T: Sendable>(_ body: (SimulatorState) throws -> T) rethrows -> T {
        try state.withLock { try body($0) }
    }

    /// Applies a change and saves the result.
    func change<T: Sendable>(_ body: (inout SimulatorState) throws -> T) rethrows -> T {
        try state.withLock { state in
            let result = try body(&state)
            save(state)
            return result
        }
    }

    /// Saves without a change (the first save of a fresh state directory).
    func saveNow() throws {
        guard let file else { return }
        try state.withLock { state in
            try file.write(Self.fileName, JSONWriter.bytes(state.json(developerKeyPEM: developerKeyPEM)))
        }
    }

    /// Writes a file beside the state (a new team's key), when there is a state directory.
    func writeFile(_ name: String, _ bytes: [UInt8]) throws {
        try file?.write(name, bytes)
    }

    private func save(_ state: SimulatorState) {
        guard let file else { return }
        do {
            try file.write(Self.fileName, JSONWriter.bytes(state.json(developerKeyPEM: developerKeyPEM)))
        } catch {
            logger.error("simulator state not saved: \(error)")
        }
    }
}
