import Foundation

/// The project's Python virtual environment (`.build-py`, made by `Scripts/python-tools`), whose
/// independent implementations check what the server signs and sends: `joserfc` and
/// `cryptography` for access tokens, `standardwebhooks` for webhook signatures, `aiosmtpd` for
/// the SMTP client.
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
            WARNING: .build-py is missing: the tests that check signatures and mail with Python are SKIPPED, not passed.
            WARNING: make it with: Scripts/python-tools cryptography joserfc standardwebhooks aiosmtpd

            """.utf8))
        return false
    }()

    /// Runs `script` with `arguments` (no standard input: pass data as arguments); returns
    /// standard output, or throws with standard error. Through `ChildProcess`, never
    /// Foundation's `Process` (see ChildProcess for why).
    public static func run(_ script: String, _ arguments: [String] = [], seconds: Double = 60) async throws -> String {
        let child = try ChildProcess(executable: python, arguments: ["-c", script] + arguments, environment: ProcessInfo.processInfo.environment)
        let termination = await child.wait(seconds: seconds)
        guard termination == .exited(0) else {
            throw Failure(description: "python ended with \(termination.status): \(child.stderrText)")
        }
        return child.stdoutText
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }
}
