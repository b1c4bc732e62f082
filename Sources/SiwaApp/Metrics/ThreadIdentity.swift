import Glibc

/// A cheap per-thread number for picking a lock stripe. Thread handles are addresses spaced by
/// stack size, so their low bits are alike; a multiplicative hash spreads them.
enum ThreadIdentity {
    static var current: UInt {
        (UInt(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> 56
    }
}
