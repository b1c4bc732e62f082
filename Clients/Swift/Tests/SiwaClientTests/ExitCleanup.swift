import Foundation

/// What the test process leaves behind is ended and removed when it exits: the shared server
/// lives as long as the tests, and a failed test must not leave a server running.
enum ExitCleanup {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var pids: [Int32] = []
    nonisolated(unsafe) private static var folders: [String] = []
    nonisolated(unsafe) private static var registered = false

    static func terminate(_ pid: Int32) { register { pids.append(pid) } }
    static func remove(_ folder: URL) { register { folders.append(folder.path) } }

    private static func register(_ change: () -> Void) {
        lock.withLock {
            change()
            if registered { return }
            registered = true
            atexit {
                ExitCleanup.lock.withLock {
                    for pid in ExitCleanup.pids {
                        kill(pid, SIGTERM)
                        var status: Int32 = 0
                        waitpid(pid, &status, 0)
                    }
                    for folder in ExitCleanup.folders { try? FileManager.default.removeItem(atPath: folder) }
                }
            }
        }
    }
}
