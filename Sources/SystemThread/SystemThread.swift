#if canImport(Glibc)
import CSystem
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Named POSIX threads for work that blocks (epoll, a database writer, sockets) and so must
/// never run on Swift's small cooperative pool. One implementation for every module.
public enum SystemThread {
    public struct StartFailure: Error, CustomStringConvertible, Sendable {
        public let code: Int32
        public var description: String { "pthread_create failed (error \(code))" }
    }

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts a joinable thread running `body`; the caller joins (or detaches) it.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(StartFailure) -> pthread_t {
        let box = Unmanaged.passRetained(Body(body))
        #if canImport(Darwin)
        var handle: pthread_t?
        #else
        var handle = pthread_t()
        #endif
        let result = pthread_create(&handle, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw StartFailure(code: result)
        }
        #if canImport(Darwin)
        let started = handle!
        #else
        let started = handle
        #endif
        setName(started, name)
        return started
    }

    /// Starts a thread nobody joins.
    public static func startDetached(name: String, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        pthread_detach(try start(name: name, body))
    }

    /// Linux keeps at most 15 characters of a thread's name.
    private static func setName(_ thread: pthread_t, _ name: String) {
        #if canImport(Glibc)
        _ = pthread_setname_np(thread, String(name.prefix(15)))
        #endif
    }
}
