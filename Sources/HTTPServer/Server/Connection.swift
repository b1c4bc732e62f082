import CSystem
import Glibc
import Sockets

/// One client connection, owned by one event loop and touched only on its thread: the
/// syscalls, the clock and the handlers' tasks around a `ConnectionState`, which holds the
/// HTTP rules and says what to do next.
final class Connection {
    let socket: ConnectedSocket
    /// The client this connection counts against for the per-client cap; nil when exempt.
    let countedAs: ClientKey?
    private unowned let loop: HTTPLoop
    private var state: ConnectionState
    private var registeredEvents = EPOLLIN.rawValue | EPOLLRDHUP.rawValue

    init(socket: ConnectedSocket, remoteAddress: String, countedAs: ClientKey?, loop: HTTPLoop, now: UInt64) {
        self.socket = socket
        self.countedAs = countedAs
        self.loop = loop
        let configuration = loop.server.configuration
        state = ConnectionState(
            remoteAddress: remoteAddress, timeouts: configuration.timeouts, limits: configuration.limits, budget: loop.server.bodyBudget, now: now)
    }

    // MARK: Events

    func handle(events: UInt32) {
        guard !state.isClosed else { return }
        let readable = events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        if events & EPOLLOUT.rawValue != 0 {
            state.writable()
            // Output first when input came too: an answer that says `close` starts the linger
            // once it is out, and what is read after it is then drained, not parsed.
            if readable {
                drive()
                guard !state.isClosed else { return }
            }
        }
        if readable {
            switch socket.read(into: loop.readBuffer) {
            case .bytes(let count):
                state.received(UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]), now: MonotonicClock.now())
            case .end:
                state.peerClosed()
            case .wouldBlock:
                break
            case .failed:
                abort()
                return
            }
        }
        drive()
    }

    /// Takes the state's steps until it waits: answers, writes, the linger, the close. Nothing
    /// once closed: the descriptor number may already be another connection's. Never entered
    /// twice: an immediate answer is reported within it, and a task's answer (`complete`) runs
    /// later, from the loop's queue of jobs.
    private func drive() {
        guard !state.isClosed else { return }
        var immediateAnswers = 0
        while true {
            switch state.next(now: MonotonicClock.now()) {
            case .dispatch(let request, let context):
                dispatch(request, context: context, immediateAnswers: &immediateAnswers)
            case .refuse(let refusal, let context):
                respond(loop.server.responder.response(for: refusal, requestID: context.encoding.requestID), context: context)
            case .write:
                guard write() else { return }
            case .shutdownWrite:
                socket.shutdownWrite()
            case .close:
                closeDescriptor()
                return
            case .wait:
                updateInterest()
                return
            }
        }
    }

    // MARK: Requests

    private func dispatch(_ request: HTTPRequest, context: ResponseContext, immediateAnswers: inout Int) {
        // The server, not a copy of its responder: copying the existential retained each of
        // the responder's references once more per request.
        let server = loop.server
        let offloaded = request.body.count >= server.configuration.limits.offloadBodyBytes
        // Answered at once, here on the loop's thread: `drive` then goes on to the next
        // pipelined request, as it does when a task's handler completes within this iteration.
        // A client pipelining thousands of them gets a loop's turn's worth at once; the next
        // goes to a task, so the loop serves its other connections before the rest.
        if !offloaded, immediateAnswers < Self.maxImmediateAnswersInARow, let response = server.responder.respondImmediately(to: request) {
            immediateAnswers += 1
            respond(response, context: context)
            return
        }
        let connection = LoopBound(self)
        if offloaded {
            // Parsing a large body takes milliseconds: on the background threads, so the loop's
            // other connections are not kept waiting; the response comes back to the loop.
            let executor = loop.executor
            Task(executorPreference: server.background) {
                let response = await server.responder.respond(to: request)
                Task(executorPreference: executor) { connection.value.complete(response, context: context) }
            }
        } else {
            // Preferring this loop's executor: a handler that never suspends runs to the end
            // on this thread, within this loop iteration.
            Task(executorPreference: loop.executor) {
                let response = await server.responder.respond(to: request)
                connection.value.complete(response, context: context)
            }
        }
    }

    /// As many as the loop runs rounds of tasks in one turn (`EventLoop.runJobs`).
    static let maxImmediateAnswersInARow = 64

    /// A handler's answer; runs on the loop thread.
    func complete(_ response: HTTPResponse, context: ResponseContext) {
        respond(response, context: context)
        drive()
    }

    private func respond(_ response: HTTPResponse, context: ResponseContext) {
        // The date and the stop are read only for an open connection: a handler that outlived
        // its loop completes on another thread.
        let record = state.responded(
            response, context: context, now: MonotonicClock.now(), date: loop.currentDate(), stopping: loop.isStopping)
        loop.server.responder.responseSent(record)
    }

    // MARK: Output

    /// Sends what is pending until it is all gone or the socket is full; false when the
    /// connection failed and is closed.
    private func write() -> Bool {
        let now = MonotonicClock.now()
        while state.hasPendingOutput {
            switch state.withPendingOutput({ socket.send($0) }) {
            case .sent(let count) where count > 0:
                state.wrote(count, now: now)
            case .wouldBlock:
                state.writeBlocked(now: now)
                return true
            case .sent, .failed:
                abort()
                return false
            }
        }
        return true
    }

    private func updateInterest() {
        var events: UInt32 = 0
        if state.wantsInput { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if state.hasPendingOutput { events |= EPOLLOUT.rawValue }
        if events != registeredEvents {
            registeredEvents = events
            loop.modify(socket.fd, events: events)
        }
    }

    // MARK: Deadlines and closing

    func checkDeadline(now: UInt64) {
        if state.tick(now: now) { drive() }
    }

    /// What this connection holds for requests and how much of the budget it has drawn, read on
    /// its loop (tests check one against the other).
    var memory: ConnectionState.Memory { state.memory }

    func serverStopping() {
        if state.serverStopping() { drive() }
    }

    func forceClose() { abort() }

    private func abort() {
        guard !state.isClosed else { return }
        state.abort()
        closeDescriptor()
    }

    private func closeDescriptor() {
        socket.close()
        loop.connectionClosed(self)
    }
}

/// Carries a loop-owned object into a task that runs on that same loop's executor.
struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
