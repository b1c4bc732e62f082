import SiwaApp
import TestSupport

extension HeldClock {
    /// The application's clocks with the wall clock held; monotonic time still runs.
    public var clocks: Clocks { Clocks(wall: read, monotonic: Clocks.system.monotonic) }

    /// The application's clocks with both held: monotonic time moves only when told.
    public var heldClocks: Clocks { Clocks(wall: read, monotonic: readMonotonic) }
}
