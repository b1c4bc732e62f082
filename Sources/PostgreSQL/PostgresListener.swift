import CLibPQ
import CSystem
import Glibc
import Synchronization
import SystemThread

/// A thread with a connection of its own that `LISTEN`s on some channels and hands every
/// `NOTIFY` on them to `onEvent`. When the connection fails or breaks it reconnects with
/// `ReconnectBackoff` and listens again.
///
/// Notifications sent while it was disconnected are lost (PostgreSQL keeps none for absent
/// listeners): on `.disconnected` and `.listening`, a cache kept fresh by notifications must
/// assume it missed some and start over.
///
/// A connection can also go silent without breaking: its server process stalled, or the
/// network half-open (TCP keepalives notice a dead peer only after about a minute). So the
/// listener confirms it with a round trip (`SELECT 1`) every `confirmEvery` (`.confirmed`),
/// and one not answered within `confirmWithin` of the last confirmation counts as broken: it
/// is closed, and the listener reconnects.
public final class PostgresListener: Sendable {
    public enum Event: Sendable {
        /// LISTEN is in effect on every channel: at start, and again after each reconnection.
        case listening
        case notification(PostgresNotification)
        /// The connection answered a round trip: it is alive, and notifications reach it.
        case confirmed
        /// Connecting failed, the connection broke or stopped answering; trying again after a
        /// back-off.
        case disconnected(PostgresError)
    }

    private let loop: Loop
    private let thread: Mutex<pthread_t?>

    /// Starts the listener thread, which connects and listens on its own; `onEvent` runs on
    /// that thread, one event at a time, and should return quickly (it holds up the next).
    /// - Parameters:
    ///   - channels: channel names, as given to `NOTIFY` or `pg_notify` (case matters).
    ///   - confirmEvery: how long after a confirmation the next round trip is sent.
    ///   - confirmWithin: how long after the last confirmation an unanswered round trip makes
    ///     the connection count as broken.
    public init(
        _ connectionString: String, channels: [String], connectTimeout: Duration = .seconds(5), applicationName: String? = nil,
        reconnect: ReconnectBackoff = ReconnectBackoff(), confirmEvery: Duration = .milliseconds(250), confirmWithin: Duration = .seconds(1),
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws {
        loop = try Loop(
            info: ConnectionInfo(connectionString), channels: channels, connectTimeout: connectTimeout,
            applicationName: applicationName, backoff: reconnect,
            confirmation: (every: confirmEvery, within: max(confirmWithin, confirmEvery)), onEvent: onEvent
        )
        let loop = self.loop
        do {
            thread = Mutex(try SystemThread.start(name: "siwa-pg-listen") { loop.run() })
        } catch {
            loop.finish()
            throw PostgresError(code: "58000", message: "cannot start the PostgreSQL listener thread (\(error))")
        }
    }

    deinit {
        close()
    }

    /// The server process of the listening connection (what `pg_terminate_backend` takes); nil
    /// while not connected. For diagnostics and tests.
    public var backendProcessID: Int32? {
        let pid = loop.backendProcessID.load(ordering: .relaxed)
        return pid == 0 ? nil : pid
    }

    /// Stops listening, closes the connection and waits for the thread to end (unless called
    /// from `onEvent`, on that thread, which cannot wait for itself). Idempotent.
    public func close() {
        loop.stop()
        guard let thread = thread.withLock({ thread in defer { thread = nil }; return thread }) else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// The listener thread's state and work.
    private final class Loop: Sendable {
        let info: ConnectionInfo
        let channels: [String]
        let connectTimeout: Duration
        let applicationName: String?
        let initialBackoff: ReconnectBackoff
        let confirmation: (every: Duration, within: Duration)
        let onEvent: @Sendable (Event) -> Void
        /// The listening connection's server process, 0 while there is none.
        let backendProcessID = Atomic<Int32>(0)
        /// An eventfd `stop()` signals to wake the thread from poll(). The thread closes it when
        /// it ends, under the same lock, so no signal can hit a reused descriptor.
        private let wake: Mutex<(isOpen: Bool, isStopping: Bool)>
        private let wakeDescriptor: Int32

        init(
            info: ConnectionInfo, channels: [String], connectTimeout: Duration, applicationName: String?,
            backoff: ReconnectBackoff, confirmation: (every: Duration, within: Duration), onEvent: @escaping @Sendable (Event) -> Void
        ) throws {
            let descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
            guard descriptor >= 0 else {
                throw PostgresError(code: "58000", message: "eventfd failed (errno \(errno))")
            }
            self.info = info
            self.channels = channels
            self.connectTimeout = connectTimeout
            self.applicationName = applicationName
            initialBackoff = backoff
            self.confirmation = confirmation
            self.onEvent = onEvent
            wakeDescriptor = descriptor
            wake = Mutex((true, false))
        }

        var isStopping: Bool { wake.withLock { $0.isStopping } }

        func stop() {
            wake.withLock { wake in
                guard !wake.isStopping else { return }
                wake.isStopping = true
                if wake.isOpen { _ = eventfd_write(wakeDescriptor, 1) }
            }
        }

        /// Closes the eventfd; the thread's last act (or init's, when no thread started).
        func finish() {
            wake.withLock { wake in
                guard wake.isOpen else { return }
                wake.isOpen = false
                Glibc.close(wakeDescriptor)
            }
        }

        func run() {
            var backoff = initialBackoff
            while !isStopping {
                let connection: PostgresConnection
                do {
                    connection = try connect()
                } catch {
                    backoff.failed(error, at: .now)
                    onEvent(.disconnected(error))
                    sleep(until: backoff.retryAt)
                    continue
                }
                let connectedAt = ContinuousClock.now
                backendProcessID.store(connection.backendProcessID, ordering: .relaxed)
                onEvent(.listening)
                let failure = listen(on: connection)
                backendProcessID.store(0, ordering: .relaxed)
                connection.close()
                guard let failure else { break }
                onEvent(.disconnected(failure))
                // A connection that lived a while was a success; one broken at once (a server
                // refusing this session over and over) backs off like a failed attempt.
                if ContinuousClock.now - connectedAt > backoff.maximum { backoff.succeeded() }
                backoff.failed(failure, at: .now)
                sleep(until: backoff.retryAt)
            }
            finish()
        }

        private func connect() throws(PostgresError) -> PostgresConnection {
            let connection = try PostgresConnection(info: info, connectTimeout: connectTimeout, applicationName: applicationName)
            for channel in channels {
                _ = try connection.simpleQuery("LISTEN " + connection.quotedIdentifier(channel))
            }
            return connection
        }

        /// Delivers notifications, and confirms the connection, until it breaks or stops
        /// answering (returns why) or `stop()` (nil).
        private func listen(on connection: PostgresConnection) -> PostgresError? {
            let handle = connection.handle
            let socket = PQsocket(handle)
            // LISTEN's answer was the first confirmation.
            var confirmedAt = ContinuousClock.now
            var confirming = false
            while true {
                // A notification may have arrived with the answer to LISTEN.
                deliverNotifications(handle)
                let now = ContinuousClock.now
                if !confirming, now >= confirmedAt + confirmation.every {
                    // One small query at a time: the send never waits for buffer space.
                    guard PQsendQuery(handle, "SELECT 1") == 1 else { return Self.lost(handle) }
                    confirming = true
                }
                if confirming, now >= confirmedAt + confirmation.within {
                    return PostgresError(
                        code: PostgresError.connectionLostCode, message: "the listening connection did not answer within \(confirmation.within)")
                }
                let wakeAt = confirmedAt + (confirming ? confirmation.within : confirmation.every)
                var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&descriptors, 2, Self.milliseconds(until: wakeAt))
                if ready < 0 {
                    if errno == EINTR { continue }
                    return PostgresError(code: PostgresError.connectionLostCode, message: "poll failed (errno \(errno))")
                }
                if descriptors[1].revents != 0 || isStopping { return nil }
                guard descriptors[0].revents != 0 else { continue }
                if PQconsumeInput(handle) == 0 || !connection.isConnected { return Self.lost(handle) }
                guard confirming else { continue }
                switch Self.answer(handle) {
                case .pending:
                    break
                case .answered:
                    // Notifications read with the answer came before it.
                    deliverNotifications(handle)
                    confirming = false
                    confirmedAt = .now
                    onEvent(.confirmed)
                case .failed(let error):
                    return error
                }
            }
        }

        private func deliverNotifications(_ handle: OpaquePointer) {
            while let notification = PQnotifies(handle) {
                let pointee = notification.pointee
                let event = PostgresNotification(
                    channel: String(cString: pointee.relname),
                    payload: pointee.extra.map { String(cString: $0) } ?? "",
                    senderProcessID: pointee.be_pid
                )
                PQfreemem(notification)
                onEvent(.notification(event))
            }
        }

        private enum Answer {
            case pending, answered
            case failed(PostgresError)
        }

        /// Reads the round trip's results that have arrived, never waiting for more: answered
        /// once the null that ends them is read. An error result (the query cancelled, say)
        /// counts as a broken connection.
        private static func answer(_ handle: OpaquePointer) -> Answer {
            while PQisBusy(handle) == 0 {
                guard let result = PQgetResult(handle) else { return .answered }
                let status = PQresultStatus(result)
                PQclear(result)
                if status != PGRES_TUPLES_OK {
                    return .failed(PostgresError(code: PostgresError.connectionLostCode, message: "the listening connection's round trip failed"))
                }
            }
            return .pending
        }

        private static func lost(_ handle: OpaquePointer) -> PostgresError {
            PostgresError(
                code: PostgresError.connectionLostCode,
                message: PostgresError.firstLine(PQerrorMessage(handle)) ?? "the listening connection broke"
            )
        }

        /// Milliseconds from now until `instant` for poll(), rounded up (never early), at least 0.
        private static func milliseconds(until instant: ContinuousClock.Instant) -> Int32 {
            let remaining = (instant - .now).components
            let milliseconds = remaining.seconds * 1000 + (remaining.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            return Int32(clamping: max(0, min(milliseconds, 60_000)))
        }

        /// Waits until `instant`, or less if `stop()` is called.
        private func sleep(until instant: ContinuousClock.Instant?) {
            guard let instant else { return }
            var descriptor = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Self.milliseconds(until: instant))
        }
    }
}
