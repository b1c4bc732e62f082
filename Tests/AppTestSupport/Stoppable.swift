import AppleSimulator
import SiwaApp

/// What a test starts and must stop however it ends: a `TestApp`, or a suite's fixture around one.
public protocol Stoppable: AnyObject {
    /// Stops everything the fixture started; a second call does nothing.
    func stop() async
}

extension TestApp: Stoppable {}
extension Application: Stoppable {}
extension AppleIDSimulator: Stoppable {}
