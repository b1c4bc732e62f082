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
public final class PostgresListener: Sendable {
    public enum Event: Sendable {
        /// LISTEN is in effect on every channel: at start, and again after each reconnection.
        case listening
        case notification(PostgresNotification)
        /// Connecting failed or the connection broke; trying again after a back-off.
        case disconnected(PostgresError)
    }

    private let loop: Loop
    private let thread: Mutex<pthread_t?>

    /// Starts the listener thread, which connects and listens on its own; `onEvent` runs on
    /// that thread, one event at a time, and should return quickly (it holds up the next).
    /// - Parameters:
    ///   - channels: channel names, as given to `NOTIFY` or `pg_notify` (case matters).
    public init(
        _ connectionString: String, channels: [String], connectTimeout: Duration = .seconds(5), applicationName: String? = nil,
        reconnect: ReconnectBackoff = ReconnectBackoff(), onEvent: @escaping @Sendable (Event) -> Void
    ) throws {
        loop = try Loop(
            info: ConnectionInfo(connectionString), channels: channels, connectTimeout: connectTimeout,
            applicationName: applicationName, backoff: reconnect, onEvent: onEvent
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
        let onEvent: @Sendable (Event) -> Void
        /// An eventfd `stop()` signals to wake the thread from poll(). The thread closes it when
        /// it ends, under the same lock, so no signal can hit a reused descriptor.
        private let wake: Mutex<(isOpen: Bool, isStopping: Bool)>
        private let wakeDescriptor: Int32

        init(
            info: ConnectionInfo, channels: [String], connectTimeout: Duration, applicationName: String?,
            backoff: ReconnectBackoff, onEvent: @escaping @Sendable (Event) -> Void
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
                onEvent(.listening)
                let failure = listen(on: connection)
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

        /// Delivers notifications until the connection breaks (returns why) or `stop()` (nil).
        private func listen(on connection: PostgresConnection) -> PostgresError? {
            let handle = connection.handle
            let socket = PQsocket(handle)
            while true {
                // A notification may have arrived with the answer to LISTEN.
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
                var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&descriptors, 2, -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    return PostgresError(code: PostgresError.connectionLostCode, message: "poll failed (errno \(errno))")
                }
                if descriptors[1].revents != 0 || isStopping { return nil }
                if descriptors[0].revents != 0, PQconsumeInput(handle) == 0 || !connection.isConnected {
                    return PostgresError(
                        code: PostgresError.connectionLostCode,
                        message: PostgresError.firstLine(PQerrorMessage(handle)) ?? "the listening connection broke"
                    )
                }
            }
        }

        /// Waits until `instant`, or less if `stop()` is called.
        private func sleep(until instant: ContinuousClock.Instant?) {
            guard let instant else { return }
            let remaining = (instant - .now).components
            let milliseconds = max(0, remaining.seconds * 1000 + remaining.attoseconds / 1_000_000_000_000_000)
            var descriptor = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(min(milliseconds, 60_000)))
        }
    }
}
