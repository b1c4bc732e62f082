import CSystem
import Glibc
import Synchronization
import SystemThread

/// A child process for tests, started with `posix_spawn`, its standard output and error
/// collected by threads that own the pipe descriptors.
///
/// Not Foundation's `Process`: on Linux it lists the parent's open descriptors to close them in
/// the child, racing with every other test thread that opens and closes sockets meanwhile (it
/// crashed the test run in `memcpy`), and its pipes hand out descriptor numbers that outlive
/// the `FileHandle` owning them. Here the child closes everything above stderr itself
/// (`addclosefrom_np`), and each pipe is read and closed by exactly one thread.
public final class ChildProcess: Sendable {
    public struct SpawnFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)

        /// The shell's convention: the exit code, or 128 + the signal number.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signaled(let signal): 128 + signal
            }
        }
    }

    private struct State {
        var termination: Termination?
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var openStreams = 2
    }

    /// Held by the collecting and reaping threads, which must not keep the `ChildProcess` alive:
    /// its deinit is what kills a child a failed test left running.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    public let pid: pid_t
    private let shared = Shared()

    /// - Parameters:
    ///   - executable: an absolute path (no `PATH` search).
    ///   - environment: the child's whole environment.
    ///   - directory: its working directory.
    public init(executable: String, arguments: [String], environment: [String: String], directory: String? = nil) throws(SpawnFailure) {
        let output = try Self.makePipe()
        let errors: (read: Int32, write: Int32)
        do throws(SpawnFailure) {
            errors = try Self.makePipe()
        } catch {
            close(output.read)
            close(output.write)
            throw error
        }
        let spawned = Self.spawn(executable, arguments: arguments, environment: environment, directory: directory, stdout: output.write, stderr: errors.write)
        // The child holds its own copies of the write ends; ours must go so reads see EOF.
        close(output.write)
        close(errors.write)
        switch spawned {
        case .success(let pid):
            self.pid = pid
        case .failure(let failure):
            close(output.read)
            close(errors.read)
            throw failure
        }
        collect(output.read, isStandardError: false)
        collect(errors.read, isStandardError: true)
        reap()
    }

    deinit {
        // A test that fails early must not leave a server running.
        signal(SIGKILL)
    }

    public var termination: Termination? { shared.state.withLock { $0.termination } }
    public var isRunning: Bool { termination == nil }
    public var stdoutText: String { shared.state.withLock { String(decoding: $0.stdout, as: UTF8.self) } }
    public var stderrText: String { shared.state.withLock { String(decoding: $0.stderr, as: UTF8.self) } }

    /// Sends `signal` while the child has not been reaped: the reaper reaps under the same lock,
    /// so the pid cannot belong to another process yet.
    public func signal(_ number: Int32) {
        shared.state.withLock { state in
            if state.termination == nil { kill(pid, number) }
        }
    }

    /// Waits for the child to end and its output to be read in full, sending SIGINT after
    /// `seconds` and SIGKILL 10 s later. Suspends without holding a thread.
    public func wait(seconds: Double) async -> Termination {
        var interruptAt = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var killed = false
        while true {
            let (termination, streams) = shared.state.withLock { ($0.termination, $0.openStreams) }
            if let termination, streams == 0 { return termination }
            if termination == nil, ContinuousClock.now >= interruptAt {
                signal(killed ? SIGKILL : SIGINT)
                interruptAt = ContinuousClock.now + .seconds(10)
                killed = true
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    // MARK: Spawning

    private static func makePipe() throws(SpawnFailure) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe2(&fds, O_CLOEXEC) == 0 else { throw SpawnFailure(description: "pipe2: \(String(cString: strerror(errno)))") }
        return (fds[0], fds[1])
    }

    private static func spawn(
        _ executable: String, arguments: [String], environment: [String: String], directory: String?, stdout: Int32, stderr: Int32
    ) -> Result<pid_t, SpawnFailure> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        if let directory { posix_spawn_file_actions_addchdir_np(&actions, directory) }

        // The test process ignores SIGPIPE and may block signals on some threads; the child
        // starts with the defaults, as from a shell.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = CStringArray([executable] + arguments)
        let envp = CStringArray(environment.map { "\($0.key)=\($0.value)" })
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv.pointers, envp.pointers)
        guard result == 0 else { return .failure(SpawnFailure(description: "\(executable): \(String(cString: strerror(result)))")) }
        return .success(pid)
    }

    // MARK: Collecting

    private func collect(_ fd: Int32, isStandardError: Bool) {
        let shared = self.shared
        let started: Void? = try? SystemThread.startDetached(name: "child-output") {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                shared.state.withLock { state in
                    if isStandardError {
                        state.stderr.append(contentsOf: chunk[0..<count])
                    } else {
                        state.stdout.append(contentsOf: chunk[0..<count])
                    }
                }
            }
            close(fd)
            shared.state.withLock { $0.openStreams -= 1 }
        }
        if started == nil {
            close(fd)
            shared.state.withLock { $0.openStreams -= 1 }
        }
    }

    private func reap() {
        let shared = self.shared
        let pid = self.pid
        // If no thread can be started, `wait` ends the child and times out on its own; a test
        // machine out of threads has bigger problems to report.
        _ = try? SystemThread.startDetached(name: "child-reaper") {
            // Wait for the exit but leave the zombie, so the pid stays ours until reaped below.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
                guard errno == EINTR else { return }
            }
            shared.state.withLock { state in
                var status: Int32 = 0
                guard waitpid(pid, &status, 0) == pid else { return }
                // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
                state.termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
            }
        }
    }
}

/// A NULL-terminated array of C strings that lives as long as it does.
private final class CStringArray {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointers = .allocate(capacity: count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[count] = nil
    }

    deinit {
        for index in 0..<count { free(pointers[index]) }
        pointers.deallocate()
    }
}
