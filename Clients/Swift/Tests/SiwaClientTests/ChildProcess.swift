import Foundation

/// A child process whose output goes to a file (read by polling, never by a blocking pipe).
/// Every child is ended when the test process exits (`ExitCleanup`).
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    let logURL: URL

    init(executable: String, arguments: [String], environment: [String: String], logURL: URL) throws {
        self.logURL = logURL
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        ExitCleanup.terminate(process.processIdentifier)
    }

    var output: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    func terminate() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
