import Foundation
import TestSupport

/// The real `siwa-server` binary, run as a child process with a scratch folder as its
/// working directory, so each test has its own database and configuration.
final class ServerProcess: Sendable {
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("siwa-server").path
    }

    let folder: String
    /// Only a folder this object made is removed with it.
    private let ownsFolder: Bool
    private let child: ChildProcess

    init(_ arguments: [String], environment: [String: String] = [:], folder: String? = nil) throws {
        self.folder = folder ?? Self.makeFolder()
        ownsFolder = folder == nil
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SIWA_") }
        env.merge(environment) { $1 }
        child = try ChildProcess(executable: Self.binary, arguments: arguments, environment: env, directory: self.folder)
    }

    deinit {
        if ownsFolder { try? FileManager.default.removeItem(atPath: folder) }
    }

    static func makeFolder() -> String {
        let folder = NSTemporaryDirectory() + "siwa-e2e-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Runs a command to completion.
    static func run(_ arguments: [String], environment: [String: String] = [:], folder: String? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        let child = try ServerProcess(arguments, environment: environment, folder: folder)
        let status = await child.wait(seconds: 30)
        return (status, child.stdoutText, child.stderrText)
    }

    /// Waits for the process to end (interrupting it after `seconds`); the exit code, or 128 +
    /// the signal that ended it.
    func wait(seconds: Double) async -> Int32 {
        await child.wait(seconds: seconds).status
    }

    var pid: pid_t { child.pid }
    var isRunning: Bool { child.isRunning }
    var stdoutText: String { child.stdoutText }
    var stderrText: String { child.stderrText }

    /// The port from the `listening` log line, once it appears.
    /// Generous: on two cores the whole suite keeps the CPU busy, and this is a bound on failure,
    /// not a measure of start-up time (Scripts/bench measures that).
    func waitForPort(seconds: Double = 60) async -> UInt16? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            for line in stdoutText.split(separator: "\n") where line.contains("\"listening\"") {
                if let range = line.range(of: #""address":"127.0.0.1:"#) {
                    let digits = line[range.upperBound...].prefix { $0.isNumber }
                    return UInt16(digits)
                }
            }
            if !isRunning { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    func signal(_ number: Int32) { child.signal(number) }

    /// Until `/readyz` answers ready: the database answers and Apple's keys are loaded.
    static func waitUntilReady(port: UInt16) async throws {
        for _ in 0..<2400 {
            if try await HTTPRequest.get(port: port, path: "/readyz").hasSuffix(#"{"status":"ready"}"#) { return }
            try await Task.sleep(for: .milliseconds(25))
        }
    }
}
