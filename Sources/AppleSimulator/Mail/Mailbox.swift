import Synchronization

/// Every message the simulator's SMTP listener accepted, newest last, in memory only: at most
/// `capacity` messages and about 64 MiB of text, the oldest dropped first.
final class Mailbox: Sendable {
    private struct State {
        var messages: [MailboxMessage] = []
        var bytes = 0
        var nextID: Int64 = 1
    }

    static let byteBudget = 64 << 20

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Files a message; returns it with its id.
    @discardableResult
    func add(receivedAt: Int64, mailFrom: String, recipients: [MailboxMessage.Recipient], data: [UInt8]) -> MailboxMessage {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        // Parsed outside the lock: a large message must not hold up the other connections.
        let message = MailboxMessage(id: id, receivedAt: receivedAt, mailFrom: mailFrom, recipients: recipients, data: data)
        state.withLock { state in
            let position = state.messages.lastIndex { $0.id < id }.map { $0 + 1 } ?? 0
            state.messages.insert(message, at: position)
            state.bytes += message.size
            while state.messages.count > capacity || (state.bytes > Self.byteBudget && state.messages.count > 1) {
                state.bytes -= state.messages.removeFirst().size
            }
        }
        return message
    }

    /// Oldest first; only those addressed to `address` (delivered or sent to) when given.
    func messages(to address: String? = nil) -> [MailboxMessage] {
        let all = state.withLock { $0.messages }
        guard let address else { return all }
        return all.filter { $0.isAddressed(to: address) }
    }

    func clear() {
        state.withLock { state in
            state.messages = []
            state.bytes = 0
        }
    }
}
