import Foundation

/// The project's Python virtual environment (`.build-py`, made by `Scripts/python-tools`), whose
/// independent implementations check what the server signs: `joserfc` and `cryptography` for
/// access tokens, `standardwebhooks` for webhook signatures.
public enum PythonTools {
    /// `.build-py/bin/python` of the package root, found from this file's path.
    public static let python: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build-py/bin/python").path

    /// Whether the environment exists. Under CI (`CI=true`) tests run regardless and fail
    /// without it; elsewhere they are skipped, and this says so loudly on standard error.
    public static let testsEnabled: Bool = {
        if FileManager.default.isExecutableFile(atPath: python) || ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        FileHandle.standardError.write(Data("""
            WARNING: .build-py is missing: the tests that check signatures with Python are SKIPPED, not passed.
            WARNING: make it with: Scripts/python-tools cryptography joserfc standardwebhooks

            """.utf8))
        return false
    }()

    /// Runs `script` with `arguments`; returns standard output, or throws with standard error.
    public static func run(_ script: String, _ arguments: [String] = [], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let output = Pipe(), errors = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python exited \(process.terminationStatus): \(String(decoding: err, as: UTF8.self))")
        }
        return String(decoding: out, as: UTF8.self)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }
}
